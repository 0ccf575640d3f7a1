import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from "../../store/run-queue.js";
import { idParam, storeId } from "./store-text.js";
import { parseStreamModes } from "./stream-modes.js";
import type { WireStreamMode } from "./translate.js";

/**
 * The body of `POST /threads/:id/runs[/stream|/wait]` (the API's `RunCreate`). Unknown fields
 * are accepted, as the reference server does, because newer SDKs add fields; fields we know but
 * cannot honour are refused by {@link parseRunCreate} with a 422 naming them.
 */
export const runCreateSchema = z.looseObject({
  assistant_id: idParam().describe("agent id or slug"),
  input: z.unknown().optional(),
  command: z.unknown().optional(),
  config: z.unknown().optional(),
  context: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional(),
  if_not_exists: z.enum(["create", "reject"]).optional(),
  checkpoint: z
    .looseObject({ checkpoint_id: storeId() })
    .nullable()
    .optional()
    .describe("branch from this checkpoint (what useStream sends); checkpoint_id does the same"),
  checkpoint_id: storeId().optional(),
  interrupt_before: z.unknown().optional(),
  interrupt_after: z.unknown().optional(),
  webhook: z.unknown().optional(),
  after_seconds: z.unknown().optional(),
  on_completion: z.string().optional(),
  durability: z.enum(["sync", "async", "exit"]).optional(),
  checkpoint_during: z.boolean().optional(),
  feedback_keys: z.unknown().optional(),
  langsmith_tracer: z.unknown().optional(),
});
export type RunCreateBody = z.infer<typeof runCreateSchema>;

/** A run request we can honour, read from a {@link RunCreateBody}. */
export interface ParsedRunCreate {
  assistantId: string;
  /** The text of the one human message the run starts from; undefined = run what is next. */
  input: string | undefined;
  /** The id the client gave that message, kept so its copy of the message matches the state's. */
  inputMessageId: string | undefined;
  /** Replay/branch from this checkpoint instead of the latest. */
  checkpointId: string | undefined;
  /**
   * Answers to the requests for approval the thread waits on (`command.resume`, passed to the
   * runtime as `RunRequest.command`, which checks it before anything runs); never with `input`.
   */
  command: { resume: unknown } | undefined;
  streamModes: WireStreamMode[];
  subgraphs: boolean;
  cancelOnDisconnect: boolean;
  createThread: boolean;
  metadata: Record<string, unknown>;
  /** What to do when the thread has a run already (only "reject" outside a fleet). */
  multitaskStrategy: MultitaskStrategy;
}

/** Longest message a run accepts (a larger one is refused, not cut). */
export const MAX_INPUT_CHARS = 100_000;

function unsupported(field: string, why: string): SubagentGraphError {
  return new SubagentGraphError(ErrorCode.Unsupported, `${field}: ${why}`, { field });
}

/**
 * Checks what the run asks for. Each refusal names the field and what to send instead.
 *
 * @throws SubagentGraphError `UNSUPPORTED` (422) or `VALIDATION_FAILED`
 */
export function parseRunCreate(
  body: RunCreateBody,
  defaultModes: WireStreamMode[],
): ParsedRunCreate {
  const command = commandOf(body);
  for (const field of [
    "interrupt_before",
    "interrupt_after",
    "webhook",
    "after_seconds",
  ] as const) {
    if (body[field] !== undefined && body[field] !== null) {
      throw unsupported(field, "not supported by this server: leave it out");
    }
  }
  if (
    body.on_completion !== undefined &&
    !["keep", "complete", "continue"].includes(body.on_completion)
  ) {
    throw unsupported(
      "on_completion",
      `"${body.on_completion}" is not supported: threads are kept`,
    );
  }
  if (
    body.context !== undefined &&
    body.context !== null &&
    Object.keys(body.context as object).length > 0
  ) {
    throw unsupported(
      "context",
      "the server sets the run context (user, thread, scopes): leave it out",
    );
  }
  checkConfig(body.config);
  const input = body.input === undefined || body.input === null ? undefined : inputText(body.input);
  const checkpointId = checkpointIdOf(body);
  if (command && input !== undefined) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      "command: send either input (a new message) or command.resume (decisions on pending requests), not both",
      { field: "command" },
    );
  }
  return {
    assistantId: body.assistant_id,
    input,
    inputMessageId: input === undefined ? undefined : inputMessageIdOf(body.input),
    checkpointId,
    command,
    streamModes: parseStreamModes(body.stream_mode, defaultModes),
    subgraphs: body.stream_subgraphs === true,
    cancelOnDisconnect: body.on_disconnect === "cancel",
    createThread: body.if_not_exists === "create",
    metadata: body.metadata ?? {},
    multitaskStrategy: body.multitask_strategy ?? "reject",
  };
}

/**
 * The body's `command`: LangGraph's `Command` of which we honour `resume` (README "Approvals":
 * langchain's `{ decisions }`, or a map from interrupt id to it). `goto` and `update` would steer
 * or rewrite the graph from outside, which these agents' threads do not take.
 */
function commandOf(body: RunCreateBody): { resume: unknown } | undefined {
  const command = body.command;
  if (command === undefined || command === null) return undefined;
  const fix =
    'send command {"resume":{"decisions":[{"type":"approve"}]}} (or a map from interrupt id to that when several requests are pending)';
  if (typeof command !== "object" || Array.isArray(command)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `command ${shown(command)} is invalid: ${fix}`,
      { field: "command" },
    );
  }
  const { resume, ...rest } = command as Record<string, unknown>;
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    throw unsupported(
      `command.${key}`,
      key === "goto" || key === "update"
        ? `not supported by this server: a run resumes its thread only with command.resume (answers to pending approval requests); leave command.${key} out`
        : `not a field of LangGraph's Command we take: only command.resume is (answers to pending approval requests); leave command.${key} out`,
    );
  }
  if (resume === undefined) {
    throw new SubagentGraphError(ErrorCode.Validation, `command.resume is missing: ${fix}`, {
      field: "command.resume",
    });
  }
  return { resume };
}

/** A value as a message shows it: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `checkpoint_id`, or `checkpoint.checkpoint_id` (what `useStream` sends when branching). */
function checkpointIdOf(body: RunCreateBody): string | undefined {
  return body.checkpoint_id || body.checkpoint?.checkpoint_id || undefined;
}

function checkConfig(config: unknown): void {
  if (config === undefined || config === null) return;
  if (typeof config !== "object") throw unsupported("config", "must be an object");
  const { configurable, tags, metadata, ...rest } = config as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw unsupported(`config.${extra[0]}`, "not supported by this server: leave it out");
  }
  if (configurable && typeof configurable === "object" && Object.keys(configurable).length > 0) {
    throw unsupported(
      "config.configurable",
      "the server sets the run's configuration: leave it out",
    );
  }
  void tags;
  void metadata;
}

/** The id of the human message in `input.messages`, when the client gave it a usable one. */
function inputMessageIdOf(input: unknown): string | undefined {
  const id = (input as { messages?: { id?: unknown }[] }).messages?.[0]?.id;
  return typeof id === "string" && /^[\w.:-]{1,128}$/.test(id) ? id : undefined;
}

/** The text of the single human message in `input.messages`. */
function inputText(input: unknown): string {
  const fix =
    'send input {"messages":[{"type":"human","content":"…"}]} with exactly one human message (the thread keeps the history)';
  const messages = (input as { messages?: unknown } | null | undefined)?.messages;
  if (!Array.isArray(messages) || messages.length !== 1) {
    throw new SubagentGraphError(ErrorCode.Validation, `input: ${fix}`, { field: "input" });
  }
  const message = (typeof messages[0] === "object" && messages[0] !== null ? messages[0] : {}) as {
    type?: unknown;
    role?: unknown;
    content?: unknown;
  };
  const isHuman = message.type === "human" || message.role === "user" || message.role === "human";
  const text = contentText(message.content);
  if (!isHuman || text === undefined || text.trim() === "") {
    throw new SubagentGraphError(ErrorCode.Validation, `input.messages[0]: ${fix}`, {
      field: "input.messages",
    });
  }
  if (text.length > MAX_INPUT_CHARS) {
    throw new SubagentGraphError(
      ErrorCode.TooLarge,
      `input.messages[0] has ${text.length} characters, over the ${MAX_INPUT_CHARS} limit: upload long material as a file instead`,
      { field: "input.messages" },
    );
  }
  return text;
}

function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.map((part) =>
    typeof part === "string"
      ? part
      : (part as { type?: unknown; text?: unknown })?.type === "text" &&
          typeof (part as { text?: unknown }).text === "string"
        ? (part as { text: string }).text
        : undefined,
  );
  return parts.every((part) => part !== undefined) ? parts.join("") : undefined;
}
