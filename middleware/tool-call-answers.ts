import {
  AIMessage,
  type BaseMessage,
  type InvalidToolCall,
  type ToolCall,
  ToolMessage,
} from "@langchain/core/messages";
import { Validator } from "@langchain/core/utils/json_schema";
import { interopSafeParseAsync, isInteropZodSchema } from "@langchain/core/utils/types";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware, ToolInvocationError } from "langchain";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { findTooDeep, formatJsonPath } from "../util/json-depth.js";
import { messageText } from "../util/message-text.js";

/** Why a tool call was answered with an error instead of being run. */
export type RefusalReason = "malformed_arguments" | "unknown_tool" | "invalid_arguments";

/**
 * The artifact of a ToolMessage that refused a tool call (see
 * {@link createToolCallAnswersMiddleware}): never sent to the model, it lets code (and the
 * refused-turns limit) tell a refusal from a tool's own error.
 */
export interface RefusedToolCall {
  kind: "refused_tool_call";
  reason: RefusalReason;
}

/** Model turns in a row whose every tool call was refused, after which a run stops. */
export const MAX_REFUSED_TURNS = 3;

/**
 * Deepest tool-call arguments kept. A checkpoint whose messages nest past about 50 levels cannot
 * be read back by the checkpoint serializer, so a model that sent deeper arguments would leave its
 * thread unreadable for good; such a call is refused (and its arguments dropped) instead.
 */
export const MAX_TOOL_ARGUMENT_DEPTH = 32;

/** The `error` of the invalid-call record that stands for arguments nested too deep. */
const TOO_DEEP_ERROR = "arguments nested too deep";

/** How much of a malformed argument string a refusal quotes back to the model. */
const QUOTED_ARGUMENTS_CHARS = 500;

/** Options of {@link createToolCallAnswersMiddleware}. */
export interface ToolCallAnswersOptions {
  /** The tools the agent may call in this run (named when the model calls one that is not). */
  toolNames(context: unknown): readonly string[];
}

/**
 * Makes sure every tool call the model sends is answered by a tool message, so the thread's next
 * model request is valid (OpenAI-compatible APIs refuse a history with an unanswered call, for
 * good) and the model can read what went wrong and correct itself in the same run:
 *
 * - **Arguments that are not JSON**: the client puts such a call in `invalid_tool_calls`, not
 *   `tool_calls`, so createAgent would see no call, end the run with an empty answer, and still
 *   send the call back to the provider on the next turn. Here it becomes an ordinary tool call
 *   (empty arguments; the record in `invalid_tool_calls` stays, with what was sent) that is
 *   answered, without running anything, by an error naming the parse error.
 * - **An unknown tool** (also with no tools at all: this middleware's `wrapToolCall` gives every
 *   agent a tools node): an error naming the tools there are.
 * - **Arguments that do not fit the tool's schema**: an error naming each offending field,
 *   instead of langchain's stack trace and "Please fix your mistakes".
 * - **A tool that throws** (with a `wrapToolCall` in the chain langchain would fail the whole
 *   run, leaving the call unanswered): `tool "<name>" failed: <message>`.
 *
 * Refusals (the first three) carry a {@link RefusedToolCall} artifact. A model that makes
 * {@link MAX_REFUSED_TURNS} turns in a row of refused calls only is not called again: the run
 * fails with `INVALID_TOOL_CALLS` (a subagent's record says so), its thread consistent. A cancel,
 * an interrupt and any error from the run's own abort are rethrown untouched.
 */
export function createToolCallAnswersMiddleware(options: ToolCallAnswersOptions) {
  return createMiddleware({
    name: "ToolCallAnswers",
    wrapModelCall: async (request, handler) => {
      const streak = refusedStreak(request.state.messages);
      if (streak.turns >= MAX_REFUSED_TURNS) {
        throw new SubagentGraphError(
          ErrorCode.InvalidToolCalls,
          `the model's tool calls were refused ${streak.turns} turns in a row (the last: ${JSON.stringify(streak.last)}), so it was not called again: check that the model supports tool calling, or use another model`,
        );
      }
      const response = await handler(request);
      return AIMessage.isInstance(response) ? withAnswerableCalls(response) : response;
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const name = call.name;
      const invalid = invalidRecordOf(request.state.messages, call.id);
      if (invalid?.error === TOO_DEEP_ERROR) {
        return refusal(
          call,
          "invalid_arguments",
          `the arguments of your ${JSON.stringify(name)} call nest deeper than ${MAX_TOOL_ARGUMENT_DEPTH} levels (${invalid.args}), so it was not run: send the call again with flatter arguments`,
        );
      }
      if (invalid) {
        return refusal(call, "malformed_arguments", malformedMessage(name, invalid.args));
      }
      if (!request.tool) {
        const known = options.toolNames(request.runtime.context);
        const choice =
          known.length > 0
            ? `use one of ${known.map((tool) => JSON.stringify(tool)).join(", ")}, or answer without a tool`
            : "you have no tools: answer without calling one";
        return refusal(
          call,
          "unknown_tool",
          `there is no tool ${JSON.stringify(name)}, so the call was not run: ${choice}`,
        );
      }
      const problems = await schemaProblems(request.tool, call.args);
      if (problems.length > 0) return refusal(call, "invalid_arguments", badArgs(name, problems));
      try {
        return await handler(request);
      } catch (error) {
        if (request.runtime.signal?.aborted || isGraphBubbleUp(error)) throw error;
        // A schema our check above could not read (it is the tool's own, refined one).
        if (ToolInvocationError.isInstance(error)) {
          return refusal(call, "invalid_arguments", badArgs(name, [firstLine(error.toolError)]));
        }
        return new ToolMessage({
          content: `tool ${JSON.stringify(name)} failed: ${errorText(error)}`,
          tool_call_id: call.id ?? "",
          name,
          status: "error",
        });
      }
    },
  });
}

/**
 * `message` with each of its invalid tool calls turned into an ordinary call (empty arguments,
 * an id made up when the provider sent none), in the order the model made them; the records in
 * `invalid_tool_calls` stay (with those ids), so the tools node can tell the calls apart and
 * answer them. The message itself when it has none.
 */
export function withAnswerableCalls(message: AIMessage): AIMessage {
  const tooDeep = (message.tool_calls ?? []).flatMap((call) => {
    const found = findTooDeep(call.args, MAX_TOOL_ARGUMENT_DEPTH);
    return found ? [{ call, at: formatJsonPath(found.path) }] : [];
  });
  const invalid: InvalidToolCall[] = [
    ...(message.invalid_tool_calls ?? []),
    ...tooDeep.map(({ call, at }) => ({
      type: "invalid_tool_call" as const,
      ...(call.id === undefined ? {} : { id: call.id }),
      name: call.name,
      args: `at ${at}`,
      error: TOO_DEEP_ERROR,
    })),
  ];
  if (invalid.length === 0) return message;
  const dropped = new Set(tooDeep.map(({ call }) => call));
  const records: InvalidToolCall[] = invalid.map((record, index) => ({
    ...record,
    id: record.id || `invalid_call_${index}_${message.id ?? "turn"}`,
  }));
  const repaired: ToolCall[] = records.map((record) => ({
    id: record.id,
    name: record.name ?? "",
    args: {},
    type: "tool_call",
  }));
  const order = callOrder(message);
  const position = (call: ToolCall) => order.get(call.id ?? "") ?? Number.MAX_SAFE_INTEGER;
  const kept = (message.tool_calls ?? []).filter((call) => !dropped.has(call));
  const toolCalls = [...kept, ...repaired]
    .map((call, index) => ({ call, index }))
    .sort((a, b) => position(a.call) - position(b.call) || a.index - b.index)
    .map(({ call }) => call);
  return new AIMessage({
    content: message.content,
    ...(message.id === undefined ? {} : { id: message.id }),
    ...(message.name === undefined ? {} : { name: message.name }),
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata,
    ...(message.usage_metadata === undefined ? {} : { usage_metadata: message.usage_metadata }),
    tool_calls: toolCalls,
    invalid_tool_calls: records,
  });
}

/** Each raw call id's position in the provider's message (`additional_kwargs.tool_calls`). */
function callOrder(message: AIMessage): Map<string, number> {
  const raw = message.additional_kwargs?.tool_calls;
  const order = new Map<string, number>();
  if (!Array.isArray(raw)) return order;
  raw.forEach((call, index) => {
    const id = (call as { id?: unknown } | null)?.id;
    if (typeof id === "string" && !order.has(id)) order.set(id, index);
  });
  return order;
}

/** The `invalid_tool_calls` record with this id, in the newest AI message that has one. */
function invalidRecordOf(
  messages: readonly BaseMessage[] | undefined,
  id: string | undefined,
): InvalidToolCall | undefined {
  if (!id || !messages) return undefined;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (!message || !AIMessage.isInstance(message)) continue;
    const record = message.invalid_tool_calls?.find((candidate) => candidate.id === id);
    if (record) return record;
    if (message.tool_calls?.some((call) => call.id === id)) return undefined;
  }
  return undefined;
}

function malformedMessage(name: string, raw: string | undefined): string {
  const sent = raw ?? "";
  let problem: string;
  try {
    const parsed: unknown = JSON.parse(sent);
    problem =
      typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
        ? "could not be read"
        : "are not a JSON object";
  } catch (error) {
    problem = `are not valid JSON (${firstLine(error)})`;
  }
  const codePoints = Array.from(sent);
  const quoted =
    codePoints.length > QUOTED_ARGUMENTS_CHARS
      ? `${codePoints.slice(0, QUOTED_ARGUMENTS_CHARS).join("")}… (${codePoints.length} characters)`
      : sent;
  return `the arguments of your ${JSON.stringify(name)} call ${problem}, so it was not run; you sent: ${quoted || "(nothing)"}. Send the call again with its arguments as one JSON object`;
}

function badArgs(name: string, problems: readonly string[]): string {
  return `the arguments of your ${JSON.stringify(name)} call do not fit its schema (${problems.join("; ")}), so it was not run: send the call again with arguments that fit the schema`;
}

/** What is wrong with `args` for `tool`'s schema ([] = nothing we can tell). */
async function schemaProblems(tool: unknown, args: unknown): Promise<string[]> {
  const schema = (tool as { schema?: unknown } | null)?.schema;
  if (schema === undefined || schema === null) return [];
  if (isInteropZodSchema(schema)) {
    const result = await interopSafeParseAsync(schema, args);
    if (result.success) return [];
    return result.error.issues.map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`,
    );
  }
  if (typeof schema !== "object") return [];
  // A JSON schema (MCP tools): the validator langchain itself checks such tools with.
  const result = new Validator(schema as Record<string, unknown>).validate(args);
  if (result.valid) return [];
  const problems = result.errors
    .filter((error) => !["properties", "allOf", "anyOf", "oneOf"].includes(error.keyword))
    .map(
      (error) =>
        `${error.instanceLocation.replace(/^#\/?/, "") || "(arguments)"}: ${error.error.replace(/\.$/, "")}`,
    );
  return [...new Set(problems.length > 0 ? problems : ["does not match"])].slice(0, 5);
}

function refusal(call: ToolCall, reason: RefusalReason, content: string): ToolMessage {
  const artifact: RefusedToolCall = { kind: "refused_tool_call", reason };
  return new ToolMessage({
    content,
    tool_call_id: call.id ?? "",
    name: call.name,
    status: "error",
    artifact,
  });
}

/** True for a ToolMessage this middleware wrote to refuse a call. */
export function isRefusal(message: BaseMessage): boolean {
  if (!ToolMessage.isInstance(message)) return false;
  const artifact = message.artifact as Partial<RefusedToolCall> | undefined;
  return artifact?.kind === "refused_tool_call";
}

/**
 * The model's latest turns (since the last message that is neither the model's nor a tool's)
 * whose every tool call was refused, counted from the newest, with the newest refusal's text.
 */
function refusedStreak(messages: readonly BaseMessage[] | undefined): {
  turns: number;
  last: string;
} {
  const list = messages ?? [];
  let turns = 0;
  let last = "";
  const answers = new Map<string, BaseMessage>();
  for (let index = list.length - 1; index >= 0; index -= 1) {
    const message = list[index];
    if (!message) continue;
    if (ToolMessage.isInstance(message)) {
      answers.set(message.tool_call_id, message);
      continue;
    }
    if (!AIMessage.isInstance(message)) break;
    const calls = message.tool_calls ?? [];
    const refused = calls.map((call) => answers.get(call.id ?? ""));
    if (calls.length === 0 || !refused.every((answer) => answer && isRefusal(answer))) break;
    turns += 1;
    if (!last) last = messageText(refused.at(-1) as BaseMessage);
  }
  return { turns, last };
}

function errorText(error: unknown): string {
  return messageOf(error).trim() || "(no message)";
}

function firstLine(error: unknown): string {
  const text = messageOf(error);
  return text.split("\n")[0]?.trim() || "(no message)";
}
