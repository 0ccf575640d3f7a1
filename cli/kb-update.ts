import { ErrorCode, SubagentGraphError } from "../errors.js";
import { activeEmbedder, embedderKey } from "../knowledge/embedder.js";
import type { EmbedderSettings, KbFileRecord, Runtime } from "../runtime.js";
import type { StoreOptions } from "./commands/declaration.js";
import { EMBEDDER_FLAGS } from "./commands/kb-options.js";
import { type Io, say } from "./context.js";
import { plural } from "./text.js";

/** How often `kb update` looks at its files' vectors while they are made again. */
const POLL_MS = 200;

/**
 * `kb update <kb>`: changes the description and/or the embedder (`{}`: vectors off), guarded by
 * the version read first. When the change reindexes (a new model, length or base URL, or
 * vectors turned on) it follows each file's vectors until they are ready or failed, a line per
 * change, as `kb add` follows ingest. Exit 1 when any file's vectors failed.
 */
export async function updateKnowledgeBase(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  kb: string,
  description: string | undefined,
  embedder: Record<string, unknown> | undefined,
): Promise<number> {
  const before = await runtime.kb.get(store.uid, kb);
  const updated = await withEmbedderFlags(() =>
    runtime.kb.update(store.uid, before.id, {
      ...(description === undefined ? {} : { description }),
      ...(embedder === undefined ? {} : { embedder }),
      expected_version: before.version,
    }),
  );
  const reindexes = vectorsKey(before.embedder) !== vectorsKey(updated.embedder);
  say(
    io,
    `updated knowledge base "${updated.name}" (version ${updated.version})${reindexes ? `: ${searchMode(updated.embedder)}` : ""}`,
  );
  const active = activeEmbedder(updated.embedder);
  if (!reindexes || active === undefined) return 0;
  // Files whose ingest failed have no chunks to embed; the others get new vectors.
  const files = (await runtime.kb.listFiles(store.uid, updated.id)).filter(
    (file) => file.status !== "error",
  );
  if (files.length === 0) return 0;
  say(io, `reindexing ${plural(files.length, "file")} with ${active.model}:`);
  const failed = await followVectors(runtime, io, store, updated.id, files);
  say(io, `${updated.name}: ${plural(files.length - failed, "file")} ready, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

/**
 * Follows `files`' vectors until each is `ready` or failed (its vectors or its ingest), a line
 * per change. Resolves with how many failed. A file deleted meanwhile, or whose vectors went
 * (the embedder was turned off elsewhere), is no longer followed.
 */
async function followVectors(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  kbId: string,
  files: readonly KbFileRecord[],
): Promise<number> {
  const following = new Map<string, string>(files.map((file) => [file.id, ""]));
  let failed = 0;
  while (following.size > 0) {
    const listed = await runtime.kb.listFiles(store.uid, kbId);
    for (const file of listed) {
      const last = following.get(file.id);
      const line = describeVectors(file);
      if (last === undefined || last === line) continue;
      say(io, `  ${file.name}: ${line}`);
      const settled = file.status === "error" || (file.status === "indexed" && !isMaking(file));
      if (settled) {
        following.delete(file.id);
        if (file.status === "error" || file.vectors === "error") failed += 1;
      } else {
        following.set(file.id, line);
      }
    }
    for (const id of following.keys()) {
      if (!listed.some((file) => file.id === id)) following.delete(id);
    }
    if (following.size > 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return failed;
}

/** True while a file's vectors are being made (or waiting to be). */
function isMaking(file: KbFileRecord): boolean {
  return file.vectors === "pending" || file.vectors === "embedding";
}

/** Where a followed file is, as its progress line says it (a new line on every change). */
function describeVectors(file: KbFileRecord): string {
  if (file.status === "error") return `failed: ${file.error ?? "unknown error"}`;
  // Not indexed yet (a file added meanwhile): its ingest comes first.
  if (file.status !== "indexed") return file.status;
  if (file.vectors === "error") return `vectors failed: ${file.vectors_error ?? "unknown error"}`;
  if (file.vectors === "none") return "no vectors (the embedder was turned off meanwhile)";
  return `vectors ${file.vectors}`;
}

/** What identifies a knowledge base's vectors (`knowledge/embedder.ts`); undefined: none. */
function vectorsKey(settings: EmbedderSettings): string | undefined {
  const active = activeEmbedder(settings);
  return active === undefined ? undefined : embedderKey(active);
}

/** How a knowledge base is searched, as `kb create` and `kb update` say it. */
export function searchMode(settings: EmbedderSettings): string {
  return settings.model === undefined
    ? "full-text search only (no vectors)"
    : `hybrid search with ${settings.model} (${settings.dimensions} dimensions)`;
}

/**
 * Runs `change`; a `VALIDATION_FAILED` about an embedder field gets the option that set it in
 * front (`option --embedding-base-url: embedder.base_url "ftp://x" is invalid: use …`), so the
 * message names what the user typed as well as the field.
 */
export async function withEmbedderFlags<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    const field = SubagentGraphError.isInstance(error) ? error.field : undefined;
    const key = field?.startsWith("embedder.") ? field.slice("embedder.".length) : undefined;
    const flag =
      key !== undefined && key in EMBEDDER_FLAGS
        ? EMBEDDER_FLAGS[key as keyof typeof EMBEDDER_FLAGS]
        : undefined;
    if (flag === undefined || !SubagentGraphError.isInstance(error)) throw error;
    throw new SubagentGraphError(ErrorCode.Validation, `option ${flag}: ${error.message}`, {
      field,
      cause: error,
    });
  }
}
