import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { BACKGROUND_CHILD_MARKER } from "../contract.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Runtime } from "../runtime.js";
import { validateThreadId } from "../threads/thread-id.js";

/**
 * Thread ids over HTTP belong to the user who names them: alice's thread "t1" and bob's "t1" are
 * two threads, and nothing bob sends or reads tells him whether alice has one.
 *
 * Why: clients choose thread ids (`POST /threads {thread_id}`, `if_not_exists: "create"`), and
 * the store keys checkpoints, file folders and child threads by thread id alone. With one
 * shared namespace a create would have to fail for an id someone else holds while it succeeds
 * for a free one, and that difference tells anyone whether an id is in use.
 *
 * How: a thread a client creates with an id of its own choosing is stored as
 * `<id>_own_<16 hex>`, the hex a hash of the user id (see {@link scopedThreadId}). Every route
 * with a `:thread_id` finds the caller's thread by the id they use ({@link resolveThread}); every
 * answer to the caller has their suffix removed again, so clients only ever see the id they
 * chose (child thread ids `<id>_sub_<slug>_<hex>` included). Ids the server mints (a create
 * without `thread_id`) and threads made through the library or the CLI keep their id as it is:
 * they are found the same way. A library caller or the CLI names a client-chosen HTTP thread by
 * its stored id.
 */

const SCOPE_MARK = "_own_";
const SCOPED_SHAPE = /_own_[0-9a-f]{16}$/;

/**
 * Longest thread id a client may choose: the stored id adds 21 characters and must stay within
 * the 160 that thread ids may have (`threads/thread-id.ts`: child thread ids built on it must fit in
 * a file name).
 */
export const MAX_CLIENT_THREAD_ID = 160 - SCOPE_MARK.length - 16;

/** Suffixes by user: every SSE frame of a run is unscoped with its user's (a hash each). */
const suffixes = new Map<string, string>();
/** Users whose suffix is kept; past it the oldest goes. */
const MAX_KEPT_SUFFIXES = 10_000;

/** The suffix of the threads `uid` names themselves. */
export function ownerSuffix(uid: string): string {
  let suffix = suffixes.get(uid);
  if (suffix === undefined) {
    const hash = createHash("sha256").update(`subagent-graph thread scope\0${uid}`).digest("hex");
    suffix = `${SCOPE_MARK}${hash.slice(0, 16)}`;
    suffixes.set(uid, suffix);
    if (suffixes.size > MAX_KEPT_SUFFIXES) {
      const oldest = suffixes.keys().next().value;
      if (oldest !== undefined) suffixes.delete(oldest);
    }
  }
  return suffix;
}

/** The stored id of the thread `uid` calls `threadId`. */
export function scopedThreadId(uid: string, threadId: string): string {
  return `${threadId}${ownerSuffix(uid)}`;
}

/** `text` as `uid` may see it: their stored thread ids turned back into the ids they chose. */
export function unscopeText(uid: string, text: string): string {
  const suffix = ownerSuffix(uid);
  return text.includes(suffix) ? text.replaceAll(suffix, "") : text;
}

/** A thread id as a request names it, and the caller's thread it stands for. */
export interface ThreadRef {
  /** The id in the request. */
  external: string;
  /** The stored id of the caller's thread (`external` when they have none by that name). */
  id: string;
  /** Whether the caller has a thread by that name. */
  exists: boolean;
}

/**
 * The caller's thread named `threadId`: one they created with that id (stored scoped), or one
 * stored under that very id (minted by the server, made through the library, or older than
 * scoping). Other users' threads are never found, whatever their ids.
 */
export async function resolveThread(
  runtime: Runtime,
  uid: string,
  threadId: string,
): Promise<ThreadRef> {
  for (const id of [threadId, scopedThreadId(uid, threadId)]) {
    const found = await runtime.threads.check(uid, id).then(
      () => true,
      (error: unknown) => {
        if (SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound) return false;
        throw error;
      },
    );
    if (found) return { external: threadId, id, exists: true };
  }
  return { external: threadId, id: threadId, exists: false };
}

/**
 * The stored id of a new thread `uid` names `threadId`.
 *
 * @throws SubagentGraphError `INVALID_THREAD_ID` (field `thread_id`) for an id the rules of
 *   `threads/thread-id.ts` refuse, one longer than {@link MAX_CLIENT_THREAD_ID}, or one shaped like a
 *   stored id. Each rule looks at the id alone, never at other users' threads.
 */
export function newThreadId(uid: string, threadId: string): string {
  try {
    validateThreadId(threadId);
  } catch (error) {
    if (!SubagentGraphError.isInstance(error)) throw error;
    throw new SubagentGraphError(error.code, error.message, { field: "thread_id", cause: error });
  }
  if (threadId.length > MAX_CLIENT_THREAD_ID) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id ${JSON.stringify(threadId.slice(0, 80))}… has ${threadId.length} characters: a thread id you choose may have at most ${MAX_CLIENT_THREAD_ID} (or omit it for a new one)`,
      { field: "thread_id" },
    );
  }
  if (SCOPED_SHAPE.test(threadId)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id "${threadId}" ends like a stored thread id (${SCOPE_MARK}<16 hex>), which only the server makes: choose another id`,
      { field: "thread_id" },
    );
  }
  return scopedThreadId(uid, threadId);
}

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's thread named by the `:thread_id` of the route, once resolved. */
    threadRef?: ThreadRef;
  }
}

/**
 * Hooks that make thread ids per user over HTTP (see the top of this file): before a handler, a
 * `:thread_id` (and a `:child_thread_id` built on it) is replaced by the stored id of the
 * caller's thread, kept whole in `request.threadRef`; before an answer leaves, the caller's
 * suffix is removed from its body and its `Content-Location`. Streams written directly (SSE)
 * apply {@link unscopeText} themselves.
 */
export function registerThreadScope(app: FastifyInstance, runtime: Runtime): void {
  app.addHook("preHandler", async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (!request.uid || typeof params?.thread_id !== "string") return;
    const ref = await resolveThread(runtime, request.uid, params.thread_id);
    request.threadRef = ref;
    params.thread_id = ref.id;
    const child = params.child_thread_id;
    if (typeof child === "string" && ref.id !== ref.external) {
      // A `task` call's child (`_sub_`) or a background task's (`_bg_`).
      const prefixes = [`${ref.external}_sub_`, `${ref.external}${BACKGROUND_CHILD_MARKER}`];
      if (prefixes.some((prefix) => child.startsWith(prefix)))
        params.child_thread_id = `${ref.id}${child.slice(ref.external.length)}`;
    }
  });
  app.addHook("onSend", async (request, reply, payload) => {
    if (!request.uid) return payload;
    const location = reply.getHeader("content-location");
    if (typeof location === "string") {
      reply.header("content-location", unscopeText(request.uid, location));
    }
    return typeof payload === "string" ? unscopeText(request.uid, payload) : payload;
  });
}
