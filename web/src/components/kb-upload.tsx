import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import { ACCEPTED_FILE_TYPES, type UploadReport, uploadReport } from "../kb-model.js";

/**
 * Adds files to a knowledge base: a file input (one or many; the keyboard way) inside a zone
 * that also takes files dropped on it. Each batch is one request; what the server refused is
 * said here, next to the control that sent it: the whole upload (413 too large, 415, 422) or
 * single files of an accepted one. `onUploaded` runs after every accepted batch.
 */
export function KbUpload(props: { api: Api; kbId: string; onUploaded: () => void }) {
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [report, setReport] = useState<UploadReport | undefined>();

  const send = async (files: File[]) => {
    if (files.length === 0) return;
    setBusy(true);
    setError(undefined);
    setReport(undefined);
    try {
      setReport(uploadReport(await props.api.uploadKnowledgeFiles(props.kbId, files)));
      props.onUploaded();
    } catch (caught) {
      const names = files.map((file) => `"${file.name}"`).join(", ");
      setError(`Upload of ${names} refused: ${(caught as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const picked = (event: Event) => {
    const input = event.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    input.value = "";
    void send(files);
  };

  const dropped = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (busy) {
      setError("An upload is still being sent: drop these files again once it is done.");
      return;
    }
    void send([...(event.dataTransfer?.files ?? [])]);
  };

  const problems = report && (report.rejected.length > 0 || report.duplicates.length > 0);
  return (
    <section class="kb-upload" aria-labelledby="kb-upload-title">
      <h2 id="kb-upload-title">Add files</h2>
      <fieldset
        class={`drop-zone${dragging ? " dragging" : ""}`}
        data-drop-zone
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={dropped}
      >
        <label for="kb-files">Files to upload</label>
        <input
          id="kb-files"
          type="file"
          multiple
          accept={ACCEPTED_FILE_TYPES}
          disabled={busy}
          aria-describedby="kb-files-hint"
          onChange={picked}
        />
        <p id="kb-files-hint" class="hint">
          or drop them here: .txt, .md, .html, .pdf, .docx{busy ? " (uploading…)" : ""}
        </p>
      </fieldset>
      {error && (
        <p role="alert" class="error" data-upload-error>
          {error}
        </p>
      )}
      {problems && (
        <div role="alert" class="upload-report">
          {report.rejected.map((rejected) => (
            <p key={rejected.name} class="error" data-rejected-file={rejected.name}>
              "{rejected.name}" refused: {rejected.message}
            </p>
          ))}
          {report.duplicates.map((name) => (
            <p key={name} class="notice">
              "{name}" is already there (same content): nothing changed.
            </p>
          ))}
        </div>
      )}
    </section>
  );
}
