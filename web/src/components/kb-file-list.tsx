import { hasVectors } from "../kb-embedder-model.js";
import type { KbFileRecord } from "../kb-model.js";
import { formatSize } from "../text.js";

/**
 * A knowledge base's files with their ingest status (queued, indexing, indexed, error with the
 * reason) and, when the knowledge base has an embedder, their vectors' (pending, embedding,
 * ready, error with the reason), each with a Delete button. The status cells are plain text, so they read the same
 * to a screen reader; the page announces progress once, in its summary.
 */
export function KbFileList(props: {
  files: readonly KbFileRecord[];
  onDelete: (file: KbFileRecord) => void;
}) {
  // Nothing to list: the page's summary line says so.
  if (props.files.length === 0) return null;
  const vectors = hasVectors(props.files);
  return (
    <table class="agents kb-files">
      <caption class="visually-hidden">Files and their ingest status</caption>
      <thead>
        <tr>
          <th scope="col">File</th>
          <th scope="col">Status</th>
          {vectors && <th scope="col">Vectors</th>}
          <th scope="col">Size</th>
          <th scope="col">Lines</th>
          <th scope="col">Chunks</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.files.map((file) => (
          <tr
            key={file.id}
            data-kb-file={file.name}
            data-status={file.status}
            data-vectors={file.vectors}
          >
            <td>
              <strong class="file-name">{file.name}</strong>
            </td>
            <td data-label="Status">
              <span class={`badge status-${file.status}`}>{file.status}</span>
              {file.error && (
                <p class="field-error file-error" data-file-error>
                  {file.error}
                </p>
              )}
            </td>
            {vectors && (
              <td data-label="Vectors">
                <span class={`badge vectors-${file.vectors}`}>{file.vectors}</span>
                {file.vectors_error && (
                  <p class="field-error file-error" data-vectors-error>
                    {file.vectors_error}
                  </p>
                )}
              </td>
            )}
            <td data-label="Size">{formatSize(file.bytes)}</td>
            <td data-label="Lines">{file.status === "indexed" ? file.line_count : "—"}</td>
            <td data-label="Chunks">{file.status === "indexed" ? file.chunk_count : "—"}</td>
            <td class="actions">
              <button
                type="button"
                class="danger"
                aria-label={`Delete file ${file.name}`}
                onClick={() => props.onDelete(file)}
              >
                Delete
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
