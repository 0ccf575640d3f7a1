/**
 * Typed errors with stable codes.
 *
 * Every error this project throws on purpose is a {@link SubagentGraphError} with a `code` that
 * callers (the CLI, the HTTP layer, tests) can switch on. Messages name the thing, the bad value
 * and the fix. This file imports nothing from the rest of the code so every layer may use it.
 *
 * Guards use a `Symbol.for` brand instead of `instanceof`, so errors survive being thrown across
 * two copies of this module (a linked package, a test runner's module graph).
 */

const BRAND = Symbol.for("subagent-graph.error");

/** Stable error codes. Append only: callers and stored records depend on them. */
export const ErrorCode = {
  /** A payload failed validation; `field` names the offending field. */
  Validation: "VALIDATION_FAILED",
  /** `backend_id` and `is_subagent` disagree. */
  BackendMismatch: "BACKEND_SUBAGENT_MISMATCH",
  /** Tried to make a subagent the default agent. */
  SubagentDefault: "SUBAGENT_CANNOT_BE_DEFAULT",
  /** Tried to change `backend_id` after creation. */
  BackendImmutable: "BACKEND_ID_IMMUTABLE",
  /** An update was based on an older version of the record than the stored one. */
  VersionConflict: "VERSION_CONFLICT",
  /** Another agent of the same owner already uses the slug. */
  SlugTaken: "SLUG_TAKEN",
  /** The thing does not exist or the caller may not see it (never tell which). */
  NotFound: "NOT_FOUND",
  /** The caller may see the thing but not change it. */
  Forbidden: "FORBIDDEN",
  /** A subagent was asked to act as a main (chat) agent. */
  AgentIsSubagent: "AGENT_IS_SUBAGENT",
  /** A thread id is malformed or reserved. */
  InvalidThreadId: "INVALID_THREAD_ID",
  /** The run was cancelled (its thread was left consistent). */
  Cancelled: "RUN_CANCELLED",
  /** A thread already has a run in progress. */
  ThreadBusy: "THREAD_BUSY",
  /** A model spec in an agent's config cannot be turned into a model. */
  ModelUnavailable: "MODEL_UNAVAILABLE",
  /** A tool name in an agent's config is not registered. */
  UnknownTool: "UNKNOWN_TOOL",
  /** A scripted test model was called in a way its script does not allow. */
  ScriptViolation: "SCRIPT_VIOLATION",
  /** The runtime was used after `close()`. */
  Closed: "RUNTIME_CLOSED",
  /** A file path was refused by the sandbox's access policy; the message names the rule. */
  PathRefused: "PATH_REFUSED",
  /** A skill name in an agent's config is not in the skill library. */
  UnknownSkill: "UNKNOWN_SKILL",
  /** A skill folder is malformed (no SKILL.md, bad front matter, links, too large). */
  InvalidSkill: "INVALID_SKILL",
  /** A file, message or request body is larger than the limit that applies to it. */
  TooLarge: "TOO_LARGE",
  /** A subagent cannot be deleted while main agents list it (unless detached). */
  AgentInUse: "AGENT_IN_USE",
  /** Something with that id already exists (e.g. a thread created with `if_exists: raise`). */
  AlreadyExists: "ALREADY_EXISTS",
  /** A request field asks for something this server does not do (named in the message). */
  Unsupported: "UNSUPPORTED",
  /** A bug or a broken invariant: not the caller's fault. */
  Internal: "INTERNAL",
  /** An MCP server name in an agent's config is not defined (mcp.json / the mcpServers option). */
  UnknownMcpServer: "UNKNOWN_MCP_SERVER",
  /**
   * A model call took longer than the model timeout (`SUBAGENT_GRAPH_MODEL_TIMEOUT_MS`, the
   * `model_timeout_ms` setting) and was aborted; the thread takes the next message.
   */
  ModelTimeout: "MODEL_TIMEOUT",
  /**
   * A model call failed for good: the provider answered with an error or the connection broke,
   * after the client's retries. The message names the model and what it answered.
   */
  ModelFailed: "MODEL_FAILED",
  /**
   * The model kept sending tool calls that could not be run (arguments that are not JSON or do
   * not fit the tool's schema, unknown tools), turn after turn, so the run was stopped.
   */
  InvalidToolCalls: "INVALID_TOOL_CALLS",
  /**
   * An MCP server a subagent's `context.mcp_servers` names could not be connected (it did not
   * start, or refused the connection), so the subagent was not run without its tools.
   */
  McpUnavailable: "MCP_SERVER_UNAVAILABLE",
  /** The data folder cannot be created or written (the message names the folder and why). */
  DataDirUnusable: "DATA_DIR_UNUSABLE",
  /**
   * A stored checkpoint cannot be continued by this saver (a channel version it did not write,
   * e.g. from another saver sharing the database); the message names the value and the fix.
   */
  CheckpointIncompatible: "CHECKPOINT_INCOMPATIBLE",
  /** The web console cannot be built or served (no sources, no Vite, or no build in the folder). */
  ConsoleUnavailable: "CONSOLE_UNAVAILABLE",
  /** An HTTP request body is not valid JSON (or is empty where JSON is required). */
  MalformedJson: "MALFORMED_JSON",
  /** An HTTP request body has a content type the endpoint does not read. */
  UnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
  /** An HTTP request has no token, or one that is unknown or revoked. */
  Unauthorized: "UNAUTHORIZED",
  /** An HTTP request the server cannot read otherwise (the HTTP layer's message says why). */
  BadRequest: "BAD_REQUEST",
  /**
   * An agent's `context.knowledge_bases` names a knowledge base the running user cannot see (or
   * that does not exist): the run fails at its start instead of running without it.
   */
  UnknownKnowledgeBase: "UNKNOWN_KNOWLEDGE_BASE",
  /** A file given to a knowledge base is of a type it cannot read (the message lists those it can). */
  UnsupportedFileType: "UNSUPPORTED_FILE_TYPE",
  /** A file given to a knowledge base could not be parsed (a corrupt PDF or DOCX, say). */
  FileParseFailed: "FILE_PARSE_FAILED",
  /**
   * A knowledge base's embedding model returned vectors of another length than its settings'
   * `dimensions` (the message names the model, the expected and the returned length).
   */
  EmbeddingDimensionMismatch: "EMBEDDING_DIMENSION_MISMATCH",
  /**
   * A knowledge base's embedding endpoint failed (unreachable, refused the key, answered with
   * an error); the message names the model and the endpoint, never the key.
   */
  EmbeddingFailed: "EMBEDDING_FAILED",
  /**
   * A queued run stopped in this process because another worker has it now (it was handed back
   * at a shutdown, or taken over after this worker stalled); it goes on there.
   */
  RunSuperseded: "RUN_SUPERSEDED",
  /**
   * The database did not answer (refused or lost connection, shut down, out of connections):
   * nothing about the request was wrong, and it may be sent again shortly.
   */
  DatabaseUnavailable: "DATABASE_UNAVAILABLE",
  /**
   * The thread waits for a person's decision on a gated tool call: a new message is refused
   * until the pending requests (named in the message) are answered with `command.resume`.
   */
  AwaitingApproval: "AWAITING_APPROVAL",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Whose fault an error is, which says what the caller can do about it:
 * - `input`: the request, payload or config is wrong; sending it again unchanged fails again.
 * - `conflict`: the request is fine but clashes with the state now (a busy thread, an older
 *   version, a pending approval); it may succeed once that state changes.
 * - `upstream`: a service we depend on failed (the model, an MCP server, an embedding endpoint,
 *   the database); nothing about the request was wrong, and it may succeed later.
 * - `ours`: a bug, a broken invariant or this process's own state (closing, an unusable data
 *   folder); the server log says more.
 */
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/** The categories, in the order above. */
export const ERROR_CATEGORIES = ["input", "conflict", "upstream", "ours"] as const;

/**
 * The category of every code, exhaustive by type: a new code does not compile until it has one.
 * The HTTP status of each code (`server/http-errors.ts`) follows it: input 4xx, conflict 409,
 * upstream 502–504, ours 5xx (`test/errors.test.ts` checks the two agree).
 */
export const ERROR_CATEGORY: Readonly<Record<ErrorCode, ErrorCategory>> = {
  [ErrorCode.Validation]: "input",
  [ErrorCode.BackendMismatch]: "input",
  [ErrorCode.SubagentDefault]: "input",
  [ErrorCode.BackendImmutable]: "input",
  [ErrorCode.VersionConflict]: "conflict",
  [ErrorCode.SlugTaken]: "conflict",
  [ErrorCode.NotFound]: "input",
  [ErrorCode.Forbidden]: "input",
  [ErrorCode.AgentIsSubagent]: "input",
  [ErrorCode.InvalidThreadId]: "input",
  [ErrorCode.Cancelled]: "conflict",
  [ErrorCode.ThreadBusy]: "conflict",
  [ErrorCode.ModelUnavailable]: "input",
  [ErrorCode.UnknownTool]: "input",
  [ErrorCode.ScriptViolation]: "ours",
  [ErrorCode.Closed]: "ours",
  [ErrorCode.PathRefused]: "input",
  [ErrorCode.UnknownSkill]: "input",
  [ErrorCode.InvalidSkill]: "input",
  [ErrorCode.TooLarge]: "input",
  [ErrorCode.AgentInUse]: "conflict",
  [ErrorCode.AlreadyExists]: "conflict",
  [ErrorCode.Unsupported]: "input",
  [ErrorCode.Internal]: "ours",
  [ErrorCode.UnknownMcpServer]: "input",
  [ErrorCode.ModelTimeout]: "upstream",
  [ErrorCode.ModelFailed]: "upstream",
  [ErrorCode.InvalidToolCalls]: "upstream",
  [ErrorCode.McpUnavailable]: "upstream",
  [ErrorCode.DataDirUnusable]: "ours",
  [ErrorCode.CheckpointIncompatible]: "ours",
  [ErrorCode.ConsoleUnavailable]: "ours",
  [ErrorCode.MalformedJson]: "input",
  [ErrorCode.UnsupportedMediaType]: "input",
  [ErrorCode.Unauthorized]: "input",
  [ErrorCode.BadRequest]: "input",
  [ErrorCode.UnknownKnowledgeBase]: "input",
  [ErrorCode.UnsupportedFileType]: "input",
  [ErrorCode.FileParseFailed]: "input",
  [ErrorCode.EmbeddingDimensionMismatch]: "input",
  [ErrorCode.EmbeddingFailed]: "upstream",
  [ErrorCode.RunSuperseded]: "conflict",
  [ErrorCode.DatabaseUnavailable]: "upstream",
  [ErrorCode.AwaitingApproval]: "conflict",
};

/**
 * The ids an error is about, as fields a caller can read without parsing the message (the HTTP
 * error body carries them as `error.details`). Only ids and small values: never a secret.
 */
export interface ErrorDetails {
  thread_id?: string;
  run_id?: string;
  checkpoint_id?: string;
  /** The agent's id (or, where only that is known, its slug). */
  agent?: string;
  /** Background task id. */
  task_id?: string;
  /** Pending approval (interrupt) ids. */
  interrupt_ids?: readonly string[];
  /** The stored version, for a version conflict. */
  current_version?: number;
}

export interface SubagentGraphErrorOptions {
  /** The payload field (dotted path) the error is about, when there is one. */
  field?: string;
  /** The ids the error is about (see {@link ErrorDetails}). */
  details?: ErrorDetails;
  cause?: unknown;
}

/** Base class of every deliberate error. `category` says whose fault it is. */
export class SubagentGraphError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options: SubagentGraphErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SubagentGraphError";
    this.code = code;
    this.field = options.field;
    this.details = options.details;
  }

  /** Whose fault the error is (see {@link ErrorCategory}). */
  get category(): ErrorCategory {
    return ERROR_CATEGORY[this.code] ?? "ours";
  }

  /**
   * True for errors the caller can act on (its input, or a conflict with the state now); false
   * for an upstream service's failure or ours.
   */
  get isUserError(): boolean {
    const category = this.category;
    return category === "input" || category === "conflict";
  }

  static isInstance(value: unknown): value is SubagentGraphError {
    return typeof value === "object" && value !== null && BRAND in value;
  }
}

/** Shorthand for a validation error about one field. */
export function validationError(field: string, message: string): SubagentGraphError {
  return new SubagentGraphError(ErrorCode.Validation, message, { field });
}

/**
 * The message of anything thrown: an `Error`'s message, anything else as a string (a rejected
 * promise may carry any value).
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when `value` is a {@link SubagentGraphError} with the given code. */
export function hasErrorCode(value: unknown, code: ErrorCode): boolean {
  return SubagentGraphError.isInstance(value) && value.code === code;
}
