/**
 * The wire shapes of LangGraph's thread-centric ("v2") streaming protocol, as far as our server
 * speaks it: commands in, responses and events out (`@langchain/protocol`'s `Command`,
 * `CommandResponse`, `ErrorResponse`, `Event`). Kept here as our own types so nothing below
 * depends on a package we do not declare.
 */

/** A protocol event: one per thread sequence number (`seq`, also its SSE `id`). */
export interface ProtocolEvent {
  type: "event";
  /** `seq` as text (the SSE `id`, what a client replays after). */
  event_id: string;
  /** Monotonic per thread (across its runs), from 1. */
  seq: number;
  /** `lifecycle`, `values`, `updates`, `messages`, `tools`, `custom`, `input.requested`. */
  method: string;
  params: {
    namespace: string[];
    timestamp: number;
    /** The graph node that produced it (updates). */
    node?: string;
    data: unknown;
  };
}

/** An event before the session numbers it. */
export interface UnnumberedEvent {
  method: string;
  namespace: string[];
  node?: string;
  data: unknown;
}

/** A command as a client sends it: `{ id, method, params }`. */
export interface ProtocolCommand {
  id: number;
  method: string;
  params: Record<string, unknown>;
}

/** The protocol's error codes (`ErrorCode` of `@langchain/protocol`). */
export type ProtocolErrorCode =
  | "invalid_argument"
  | "unknown_command"
  | "unknown_error"
  | "no_such_run"
  | "no_such_subscription"
  | "no_such_interrupt"
  | "permission_denied"
  | "not_supported";

/** What every response carries besides its result: the thread and how far its events went. */
export interface ResponseMeta {
  thread_id: string;
  applied_through_seq: number;
}

export interface SuccessResponse {
  type: "success";
  id: number;
  result: Record<string, unknown>;
  meta?: ResponseMeta;
}

export interface ErrorResponse {
  type: "error";
  /** The command's id; null when the command could not be read far enough to have one. */
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  meta?: ResponseMeta;
}

export type ProtocolResponse = SuccessResponse | ErrorResponse;

/**
 * A refusal of a command, thrown inside a handler and turned into an {@link ErrorResponse}.
 * `status` is what the HTTP transport answers with (200 for refusals about the thread's state,
 * as LangGraph's server does; 4xx when the request itself is unreadable or names nothing ours).
 */
export class CommandRefusal extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
    readonly status = 200,
  ) {
    super(message);
  }
}

export function errorResponse(
  id: number | null,
  code: ProtocolErrorCode,
  message: string,
  meta?: ResponseMeta,
): ErrorResponse {
  return { type: "error", id, error: code, message, ...(meta ? { meta } : {}) };
}
