import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "../api.js";
import { isIngesting, type KbFileRecord } from "../kb-model.js";

/** How often the file list is read again while a file is queued or indexing. */
const POLL_MS = 1_000;

/** A knowledge base's files as the page shows them, kept fresh while ingest runs. */
export interface KbFilesState {
  /** Undefined until the first listing answers. */
  files: KbFileRecord[] | undefined;
  /** Why the last listing failed; cleared by the next one that answers. */
  error: string | undefined;
  /** True once the server said the knowledge base is not there (404): polling stops. */
  gone: boolean;
  /** True while the list is read again on a beat (a file is queued or indexing). */
  polling: boolean;
  /** Reads the list again now (after an upload or a delete). */
  reload: () => Promise<void>;
}

/**
 * Lists a knowledge base's files and reads the list again every second while any file is
 * `queued` or `indexing`, stopping as soon as none is. Only the answer of the latest listing
 * is kept: one started before an upload must not hide the files that upload added. A failed
 * listing is reported and retried on the same beat while ingest runs, except a 404, which
 * means the knowledge base is gone.
 */
export function useKbFiles(api: Api, kbId: string): KbFilesState {
  const [files, setFiles] = useState<KbFileRecord[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [gone, setGone] = useState(false);
  // Bumped after every listing, answered or failed, so the poll below is scheduled again.
  const [attempts, setAttempts] = useState(0);
  const latest = useRef(0);

  const reload = useCallback(async () => {
    latest.current += 1;
    const ticket = latest.current;
    try {
      const listed = await api.knowledgeFiles(kbId);
      if (ticket !== latest.current) return;
      setFiles(listed);
      setError(undefined);
    } catch (caught) {
      if (ticket !== latest.current) return;
      if (caught instanceof ApiError && caught.status === 404) setGone(true);
      setError(`Cannot list the files: ${(caught as Error).message}`);
    } finally {
      if (ticket === latest.current) setAttempts((count) => count + 1);
    }
  }, [api, kbId]);

  useEffect(() => {
    setFiles(undefined);
    setGone(false);
    void reload();
  }, [reload]);

  const polling = !gone && files !== undefined && isIngesting(files);
  // `attempts` is a dependency only to schedule the next poll after each listing.
  useEffect(() => {
    if (!polling) return;
    const timer = setTimeout(() => void reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [polling, attempts, reload]);

  return { files, error, gone, polling, reload };
}
