import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { KbForm } from "../components/kb-form.js";
import { KB_DELETE_WARNING, type KnowledgeBaseRecord } from "../kb-model.js";

/** A knowledge base with its file count (undefined while it loads, null if it could not). */
interface Listed {
  kb: KnowledgeBaseRecord;
  fileCount: number | null | undefined;
}

/**
 * Every knowledge base the user may see, with its file count and sharing, a form to create
 * one and a Delete that asks first. `onOpen` shows one (its files, uploads and search).
 */
export function KbListPage(props: { api: Api; onOpen: (kb: KnowledgeBaseRecord) => void }) {
  const { api } = props;
  const [listed, setListed] = useState<Listed[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<KnowledgeBaseRecord | undefined>();

  // Only the latest load's answers are shown: one started before a delete must not bring back
  // what the delete removed.
  const latest = useRef(0);
  // `/api/kb` has no file counts: each knowledge base's file list is read alongside it.
  const load = useCallback(async () => {
    latest.current += 1;
    const ticket = latest.current;
    try {
      const kbs = await api.listKnowledgeBases();
      if (ticket !== latest.current) return;
      setListed(kbs.map((kb) => ({ kb, fileCount: undefined })));
      setError(undefined);
      const counts = await Promise.all(
        kbs.map((kb) =>
          api.knowledgeFiles(kb.id).then(
            (files) => files.length,
            () => null,
          ),
        ),
      );
      if (ticket !== latest.current) return;
      setListed(kbs.map((kb, index) => ({ kb, fileCount: counts[index] })));
    } catch (caught) {
      if (ticket !== latest.current) return;
      setError(`Cannot list the knowledge bases: ${(caught as Error).message}`);
    }
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (kb: KnowledgeBaseRecord) => {
    setDeleting(undefined);
    try {
      await api.deleteKnowledgeBase(kb.id);
    } catch (caught) {
      setError(`Cannot delete "${kb.name}": ${(caught as Error).message}`);
      return;
    }
    await load();
  };

  return (
    <section class="page">
      <div class="page-head">
        <h1>Knowledge bases</h1>
        <button type="button" onClick={() => setCreating(true)} disabled={creating}>
          New knowledge base
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {creating && (
        <KbForm
          api={api}
          onDone={(created) => {
            setCreating(false);
            if (created) props.onOpen(created);
          }}
        />
      )}
      {listed === undefined ? (
        !error && <p aria-busy="true">Loading knowledge bases…</p>
      ) : listed.length === 0 ? (
        <p>No knowledge bases yet: create one with "New knowledge base".</p>
      ) : (
        <table class="agents">
          <caption class="visually-hidden">Knowledge bases you may see</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Files</th>
              <th scope="col">Sharing</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {listed.map(({ kb, fileCount }) => (
              <tr key={kb.id} data-kb-name={kb.name}>
                <td>
                  <a href={`#/kb/${encodeURIComponent(kb.id)}`}>
                    <strong>{kb.name}</strong>
                  </a>
                  {kb.description && <div class="muted">{kb.description}</div>}
                </td>
                <td data-label="Files" data-file-count>
                  {fileCount === undefined ? (
                    "…"
                  ) : fileCount === null ? (
                    <span title="the file list could not be read">?</span>
                  ) : (
                    fileCount
                  )}
                </td>
                <td data-label="Sharing">
                  {kb.share_config.mode}
                  <div class="muted">owner: {kb.owner_uid}</div>
                </td>
                <td class="actions">
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Delete ${kb.name}`}
                    onClick={() => setDeleting(kb)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete "${deleting.name}"?`}
          confirmLabel="Delete"
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        >
          <p>{KB_DELETE_WARNING}</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
