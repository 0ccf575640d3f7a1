import { useEffect, useRef, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { KbFileList } from "../components/kb-file-list.js";
import { KbForm } from "../components/kb-form.js";
import { KbSearch } from "../components/kb-search.js";
import { KbUpload } from "../components/kb-upload.js";
import { useKbFiles } from "../components/use-kb-files.js";
import { searchMode, vectorSummary } from "../kb-embedder-model.js";
import {
  ingestSummary,
  KB_DELETE_WARNING,
  type KbFileRecord,
  type KnowledgeBaseRecord,
} from "../kb-model.js";

/** What the confirm dialog is asking about. */
type Deleting = { kind: "kb" } | { kind: "file"; file: KbFileRecord };

/**
 * One knowledge base: its files with their live ingest and vectors status (a reindex after an
 * embedder change is followed like an upload), uploads (picked or dropped),
 * file and knowledge base deletion, and a search box. `onDeleted` runs once it is deleted.
 */
export function KbDetailPage(props: { api: Api; kbId: string; onDeleted: () => void }) {
  const { api, kbId } = props;
  const [kb, setKb] = useState<KnowledgeBaseRecord | undefined>();
  const [kbError, setKbError] = useState<string | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const [deleting, setDeleting] = useState<Deleting | undefined>();
  const [editing, setEditing] = useState(false);
  const files = useKbFiles(api, kbId);
  const heading = useRef<HTMLHeadingElement>(null);

  // Opened from the list or just created: the heading takes the focus, so keyboard and screen
  // reader users start at the top of the page they came to, not on a button that is gone.
  const loadedId = kb?.id;
  useEffect(() => {
    if (loadedId) heading.current?.focus();
  }, [loadedId]);

  useEffect(() => {
    setKb(undefined);
    setKbError(undefined);
    api.knowledgeBase(kbId).then(setKb, (caught: Error) => setKbError(caught.message));
  }, [api, kbId]);

  const confirmDelete = async (target: Deleting) => {
    setDeleting(undefined);
    setActionError(undefined);
    try {
      if (target.kind === "kb") {
        await api.deleteKnowledgeBase(kbId);
        props.onDeleted();
        return;
      }
      await api.deleteKnowledgeFile(kbId, target.file.id);
    } catch (caught) {
      const what = target.kind === "kb" ? `"${kb?.name ?? kbId}"` : `file "${target.file.name}"`;
      setActionError(`Cannot delete ${what}: ${(caught as Error).message}`);
    }
    await files.reload();
  };

  const back = (
    <a href="#/kb" class="back-link">
      ← All knowledge bases
    </a>
  );
  if (kbError) {
    return (
      <section class="page">
        {back}
        <h1>Knowledge base</h1>
        <p role="alert" class="error">
          Cannot open this knowledge base: {kbError}
        </p>
      </section>
    );
  }
  if (!kb) {
    return (
      <section class="page">
        {back}
        <p aria-busy="true">Loading the knowledge base…</p>
      </section>
    );
  }
  return (
    <section class="page kb-detail">
      {back}
      <div class="page-head">
        <h1 ref={heading} tabIndex={-1}>
          {kb.name}
        </h1>
        <div class="head-actions">
          <button
            type="button"
            class="secondary"
            disabled={editing}
            onClick={() => setEditing(true)}
          >
            Edit
          </button>
          <button type="button" class="danger" onClick={() => setDeleting({ kind: "kb" })}>
            Delete knowledge base
          </button>
        </div>
      </div>
      {editing && (
        <KbForm
          api={api}
          kb={kb}
          // Files whose ingest failed have no chunks: a reindex has nothing of theirs to redo.
          fileCount={files.files?.filter((file) => file.status !== "error").length}
          onDone={(saved) => {
            setEditing(false);
            if (!saved) return;
            setKb(saved);
            // An embedder change marks the files' vectors pending: read the list to follow them.
            void files.reload();
          }}
        />
      )}
      {kb.description && <p class="kb-description">{kb.description}</p>}
      <p class="muted">
        Sharing: {kb.share_config.mode} · owner: {kb.owner_uid} ·{" "}
        <span data-search-mode>search: {searchMode(kb.embedder)}</span>
      </p>
      {actionError && (
        <p role="alert" class="error">
          {actionError}
        </p>
      )}
      <KbUpload api={api} kbId={kb.id} onUploaded={() => void files.reload()} />
      <section aria-labelledby="kb-files-title">
        <h2 id="kb-files-title">Files</h2>
        {files.error && (
          <p role="alert" class="error">
            {files.error}{" "}
            {!files.gone && (
              <button type="button" class="link" onClick={() => void files.reload()}>
                Try again
              </button>
            )}
          </p>
        )}
        {files.files === undefined ? (
          !files.error && <p aria-busy="true">Loading files…</p>
        ) : (
          <>
            <p
              role="status"
              class="muted"
              data-ingest-summary
              data-polling={files.polling ? "true" : "false"}
            >
              {ingestSummary(files.files)} {vectorSummary(files.files)}
            </p>
            <KbFileList
              files={files.files}
              onDelete={(file) => setDeleting({ kind: "file", file })}
            />
          </>
        )}
      </section>
      <KbSearch api={api} kbId={kb.id} />
      {deleting && (
        <ConfirmDialog
          title={
            deleting.kind === "kb" ? `Delete "${kb.name}"?` : `Delete file "${deleting.file.name}"?`
          }
          confirmLabel="Delete"
          onConfirm={() => void confirmDelete(deleting)}
          onCancel={() => setDeleting(undefined)}
        >
          {deleting.kind === "kb" ? (
            <p>{KB_DELETE_WARNING}</p>
          ) : (
            <p>The file and its chunks are deleted: searches no longer find them.</p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}
