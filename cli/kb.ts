import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { KbFileRecord, KbUpload, Runtime } from "../runtime.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type Io, say } from "./context.js";
import { withEmbedderFlags } from "./kb-update.js";
import { columns, oneLine, plural } from "./text.js";

/** How often `kb add` looks at its files' status while they are indexed. */
const POLL_MS = 200;

/** `kb list`: the knowledge bases the user may read. */
export async function listKnowledgeBases(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
): Promise<number> {
  const bases = await runtime.kb.list(store.uid);
  if (bases.length === 0) {
    say(io, `user "${store.uid}" has no knowledge bases: create one with "kb create <name>"`);
    return 0;
  }
  const rows = await Promise.all(
    bases.map(async (kb) => {
      const files = await runtime.kb.listFiles(store.uid, kb.id);
      const indexed = files.filter((file) => file.status === "indexed").length;
      return [
        kb.name,
        `${indexed}/${files.length}`,
        kb.owner_uid === store.uid ? kb.share_config.mode : `shared by ${kb.owner_uid}`,
        oneLine(kb.description, 60),
      ];
    }),
  );
  say(io, columns([["NAME", "INDEXED", "SHARING", "DESCRIPTION"], ...rows]));
  return 0;
}

/** `kb create <name>`. */
export async function createKnowledgeBase(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  name: string,
  description: string | undefined,
  embedder: Record<string, unknown> | undefined,
): Promise<number> {
  const kb = await withEmbedderFlags(() =>
    runtime.kb.create(store.uid, {
      name,
      ...(description === undefined ? {} : { description }),
      ...(embedder === undefined ? {} : { embedder }),
    }),
  );
  const vectors =
    kb.embedder.model === undefined
      ? ""
      : `, hybrid search with ${kb.embedder.model} (${kb.embedder.dimensions} dimensions)`;
  say(io, `created knowledge base "${kb.name}" (${kb.id})${vectors}`);
  return 0;
}

/**
 * `kb add <kb> <paths…>`: uploads the files (a folder: every file under it), then follows each
 * one's status until it is indexed or failed, a line per change. Exit 1 when any file was
 * refused or failed.
 */
export async function addToKnowledgeBase(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  kb: string,
  paths: readonly string[],
): Promise<number> {
  const record = await runtime.kb.get(store.uid, kb);
  const uploads: KbUpload[] = [];
  for (const path of paths) uploads.push(...(await filesUnder(path)));
  const results = await runtime.kb.addFiles(store.uid, record.id, uploads);
  const following = new Map<string, string>();
  let failed = 0;
  for (const result of results) {
    if (result.status === "rejected") {
      failed += 1;
      say(io, `  ${result.name}: refused (${result.error.code}) ${result.error.message}`);
    } else if (result.duplicate) {
      say(io, `  ${result.name}: already there as "${result.file.name}" (${result.file.status})`);
    } else {
      following.set(result.file.id, "");
    }
  }
  while (following.size > 0) {
    const files = await runtime.kb.listFiles(store.uid, record.id);
    for (const file of files) {
      const last = following.get(file.id);
      if (last === undefined || last === file.status) continue;
      say(io, `  ${file.name}: ${describe(file)}`);
      if (file.status === "indexed" || file.status === "error") {
        following.delete(file.id);
        if (file.status === "error") failed += 1;
      } else {
        following.set(file.id, file.status);
      }
    }
    // A file deleted meanwhile is no longer followed.
    for (const id of following.keys()) {
      if (!files.some((file) => file.id === id)) following.delete(id);
    }
    if (following.size > 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const done = results.length - failed;
  say(io, `${record.name}: ${plural(done, "file")} ready, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

/** `kb files <kb>`: each file with its status. */
export async function listKnowledgeFiles(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  kb: string,
): Promise<number> {
  const files = await runtime.kb.listFiles(store.uid, kb);
  if (files.length === 0) {
    say(io, `knowledge base "${kb}" has no files: add some with "kb add ${kb} <paths…>"`);
    return 0;
  }
  // Vectors only for knowledge bases with an embedder (or files still losing theirs).
  const vectors = files.some((file) => file.vectors !== "none");
  say(
    io,
    columns([
      ["NAME", "STATUS", ...(vectors ? ["VECTORS"] : []), "CHUNKS", "LINES", "ID"],
      ...files.map((file) => [
        file.name,
        file.status,
        ...(vectors ? [file.vectors] : []),
        String(file.chunk_count),
        String(file.line_count),
        file.id,
      ]),
    ]),
  );
  for (const file of files) if (file.error) say(io, `${file.name}: ${file.error}`);
  for (const file of files) {
    if (file.vectors_error) say(io, `${file.name} (vectors): ${file.vectors_error}`);
  }
  return 0;
}

/** `kb search <query…>`: the best passages, with where they are. */
export async function searchKnowledge(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  query: string,
  kb: string | undefined,
): Promise<number> {
  const hits = await runtime.kb.search(store.uid, { query, kb, top_k: 5 });
  if (hits.length === 0) {
    say(io, `no matches for "${query}"`);
    return 0;
  }
  for (const [index, hit] of hits.entries()) {
    say(io, `[${index + 1}] ${hit.kb} / ${hit.file}, lines ${hit.line_start}-${hit.line_end}`);
    say(io, hit.text.replace(/^/gm, "    "));
  }
  return 0;
}

/** `kb rm <kb>`. */
export async function removeKnowledgeBase(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  kb: string,
): Promise<number> {
  const record = await runtime.kb.get(store.uid, kb);
  await runtime.kb.delete(store.uid, record.id);
  say(io, `deleted knowledge base "${record.name}"`);
  return 0;
}

function describe(file: KbFileRecord): string {
  if (file.status === "indexed") {
    return `indexed (${plural(file.chunk_count, "chunk")}, ${plural(file.line_count, "line")})`;
  }
  return file.status === "error" ? `failed: ${file.error ?? "unknown error"}` : file.status;
}

/** The files `path` names: itself, or every file under a folder (sorted). */
async function filesUnder(path: string): Promise<KbUpload[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [{ name: basename(path), content: await readFile(path) }];
  const entries = (await readdir(path, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  return Promise.all(
    entries.map(async (file) => ({ name: basename(file), content: await readFile(file) })),
  );
}
