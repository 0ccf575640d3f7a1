import type { MainAgentResolver } from "../agents/main-agent.js";
import type { ThreadFileEntry, ThreadFiles } from "../sandbox/thread-files.js";
import type { ThreadRepository } from "../store/threads.js";
import { validateThreadId } from "./thread-id.js";

/** A thread's files, every call on behalf of `uid` (who must own the thread). */
export interface FilesApi {
  /**
   * Adds a file to the thread's uploads (`/home/gem/user-data/uploads/<name>`), where its
   * agents and their subagents can read it. A new thread id is claimed for `uid` (with
   * `options.agent`, default the user's default agent), as a run would.
   */
  upload(
    uid: string,
    threadId: string,
    name: string,
    content: string | Uint8Array,
    options?: { agent?: string },
  ): Promise<ThreadFileEntry>;
  /**
   * Files under a folder of the thread (default its outputs, where agents and their subagents
   * put results), with sizes and modification times.
   */
  list(uid: string, threadId: string, folder?: string): Promise<ThreadFileEntry[]>;
  /** A file of the thread (outputs, uploads or the user's workspace) by virtual path. */
  read(uid: string, threadId: string, path: string): Promise<Buffer>;
}

/** What the files API needs from the runtime. */
export interface FilesApiDeps {
  /** Throws once the runtime is closed. */
  ensureOpen(): void;
  threads: ThreadRepository;
  threadFiles: ThreadFiles;
  mainAgent: MainAgentResolver;
  /** Throws `NOT_FOUND` unless `uid` owns the thread. */
  checkThread(uid: string, threadId: string): Promise<unknown>;
  /** Largest upload accepted, in bytes. */
  maxUploadBytes: number;
}

/** The file scope of a main thread of `uid`: its uploads/outputs and their workspace. */
function mainThreadScope(uid: string, threadId: string) {
  return { uid, fileThreadId: threadId, skillsThreadId: threadId };
}

/** Uploads to and reads from the file scope of a user's main threads. */
export function createFilesApi(deps: FilesApiDeps): FilesApi {
  const { ensureOpen, threads, threadFiles, mainAgent, checkThread, maxUploadBytes } = deps;
  return {
    async upload(uid, threadId, name, content, uploadOptions) {
      ensureOpen();
      validateThreadId(threadId);
      if (!(await threads.get(uid, threadId))) {
        const record = await mainAgent(uid, uploadOptions?.agent);
        await threads.claim(uid, threadId, record.id);
      }
      return threadFiles.upload(mainThreadScope(uid, threadId), name, content, maxUploadBytes);
    },
    async list(uid, threadId, folder) {
      ensureOpen();
      await checkThread(uid, threadId);
      return threadFiles.list(mainThreadScope(uid, threadId), folder);
    },
    async read(uid, threadId, path) {
      ensureOpen();
      await checkThread(uid, threadId);
      return (await threadFiles.read(mainThreadScope(uid, threadId), path)).bytes;
    },
  };
}
