import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { Runtime } from "../runtime.js";
import { formatBytes } from "../sandbox/text.js";
import type { StoreOptions } from "./args.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

/** `files upload <thread> <file> [name]`: a local file into the thread's uploads. */
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
  const content = await readFile(command.file);
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
