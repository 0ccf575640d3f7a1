import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Runtime } from "../runtime.js";
import { formatBytes } from "../sandbox/text.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

/**
 * `files upload <thread> <file> [name]`: a local file into the thread's uploads.
 *
 * @throws SubagentGraphError `NOT_FOUND` (field `file`) when there is no such local file,
 *   `VALIDATION_FAILED` (field `file`) when it cannot be read (a folder, no permission).
 */
export async function uploadFile(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  command: {
    threadId: string;
    file: string;
    uploadName: string | undefined;
    agent: string | undefined;
  },
): Promise<number> {
  const content = await readLocalFile(command.file);
  const entry = await runtime.files.upload(
    store.uid,
    command.threadId,
    command.uploadName ?? basename(command.file),
    content,
    command.agent ? { agent: command.agent } : {},
  );
  say(io, `uploaded ${entry.path} (${formatBytes(entry.size)}) to thread ${command.threadId}`);
  return 0;
}

/** The bytes of local file `path`, or an error naming the path, what is wrong and the fix. */
async function readLocalFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const shown = JSON.stringify(path);
    const where = path === resolve(path) ? "" : ` (from ${process.cwd()})`;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `no file ${shown}${where} to upload: give the path of an existing file`,
        { field: "file", cause: error },
      );
    }
    const reason =
      code === "EISDIR"
        ? "it is a folder"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied"
          : error instanceof Error
            ? error.message
            : String(error);
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `cannot read ${shown}${where} to upload: ${reason}; give the path of a file you can read`,
      { field: "file", cause: error },
    );
  }
}

/** `files list <thread> [folder]`: the thread's files (default its outputs). */
export async function listFiles(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  threadId: string,
  folder: string | undefined,
): Promise<number> {
  const entries = await runtime.files.list(store.uid, threadId, folder);
  if (entries.length === 0) {
    say(io, `no files in ${folder ?? "the outputs"} of thread ${threadId}`);
    return 0;
  }
  say(
    io,
    columns([
      ["SIZE", "MODIFIED", "PATH"],
      ...entries.map((entry) => [formatBytes(entry.size), entry.modifiedAt, entry.path]),
    ]),
  );
  return 0;
}

/** `files cat <thread> <path>`: one file's bytes to stdout, as they are. */
export async function catFile(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  threadId: string,
  path: string,
): Promise<number> {
  io.stdout.write(await runtime.files.read(store.uid, threadId, path));
  return 0;
}
