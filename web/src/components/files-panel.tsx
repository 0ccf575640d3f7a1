import { useEffect, useState } from "preact/hooks";
import { type Api, type FileEntry, UPLOADS_FOLDER } from "../api.js";
import { baseName, formatSize } from "../text.js";

/**
 * A thread's files: upload into its uploads (where its agent and subagents read them), and list
 * and download what they wrote to its outputs. `ensureThread` creates the thread on the first
 * upload of a new conversation; `refreshKey` changes after each run, to list new outputs.
 */
export function FilesPanel(props: {
  api: Api;
  threadId: string | undefined;
  ensureThread: () => Promise<string>;
  refreshKey: number;
}) {
  const { api, threadId } = props;
  const [uploads, setUploads] = useState<FileEntry[]>([]);
  const [outputs, setOutputs] = useState<FileEntry[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // Bumped by each upload, so a listing started before it finished (the first upload of a new
  // conversation creates the thread, which starts one) is discarded instead of hiding the file.
  const [uploadCount, setUploadCount] = useState(0);

  // `refreshKey` and `uploadCount` are dependencies only to reload after a run or an upload.
  useEffect(() => {
    if (!threadId) {
      setUploads([]);
      setOutputs([]);
      return;
    }
    let current = true;
    Promise.all([api.listFiles(threadId, UPLOADS_FOLDER), api.listFiles(threadId)]).then(
      ([uploaded, written]) => {
        if (!current) return;
        setUploads(uploaded);
        setOutputs(written);
        setError(undefined);
      },
      (caught: Error) => current && setError(caught.message),
    );
    return () => {
      current = false;
    };
  }, [api, threadId, props.refreshKey, uploadCount]);

  const upload = async (event: Event) => {
    const input = event.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setBusy(true);
    setError(undefined);
    try {
      const target = await props.ensureThread();
      const entry = await api.uploadFile(target, file);
      setUploads((current) => [...current.filter((f) => f.path !== entry.path), entry]);
      setUploadCount((count) => count + 1);
    } catch (caught) {
      setError(`Upload of "${file.name}" failed: ${(caught as Error).message}`);
    } finally {
      setBusy(false);
      input.value = "";
    }
  };

  const download = async (file: FileEntry) => {
    if (!threadId) return;
    try {
      const blob = await api.downloadFile(threadId, file.path);
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = baseName(file.path);
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (caught) {
      setError(`Download of "${baseName(file.path)}" failed: ${(caught as Error).message}`);
    }
  };

  return (
    <aside class="files" aria-label="Files">
      <div class="field">
        <label for="upload">Upload file</label>
        <input id="upload" type="file" disabled={busy} onChange={upload} />
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <h2>Uploads</h2>
      <FileList files={uploads} empty="Nothing uploaded yet." />
      <h2>Outputs</h2>
      <FileList files={outputs} empty="No outputs yet." onOpen={download} />
    </aside>
  );
}

function FileList(props: {
  files: FileEntry[];
  empty: string;
  onOpen?: (file: FileEntry) => void;
}) {
  if (props.files.length === 0) return <p class="hint">{props.empty}</p>;
  return (
    <ul class="file-list">
      {props.files.map((file) => (
        <li key={file.path}>
          {props.onOpen ? (
            <button type="button" class="link" onClick={() => props.onOpen?.(file)}>
              {baseName(file.path)}
            </button>
          ) : (
            <span>{baseName(file.path)}</span>
          )}{" "}
          <span class="muted">({formatSize(file.size)})</span>
        </li>
      ))}
    </ul>
  );
}
