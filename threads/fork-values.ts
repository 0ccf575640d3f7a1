import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { z } from "zod";
import type { AgentGraph } from "../backends/registry.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { subagentRunSchema } from "../middleware/subagent-runs.js";
import { findTooDeep, formatJsonPath } from "../util/json-depth.js";

/**
 * The checks of a fork (`ThreadsApi.fork`, `POST /threads/:id/state`) before anything is written.
 *
 * LangGraph's `updateState` trusts its input: an unknown message type throws deep inside the
 * messages reducer (a 500 over HTTP), a `subagent_runs` that is not a list is "upserted" one
 * character at a time into the saved state, an unknown key is dropped silently, and an unknown
 * node is only found once the write is under way. So each is refused here, naming the field,
 * the bad value and what is allowed.
 */

/**
 * Deepest message (as its dict) a fork may write. LangChain's loader (`@langchain/core/load`,
 * which the savers use) refuses to read back a value nested more than 50 levels, and a stored
 * message sits two levels below its dict (the list, the serialised class's `kwargs`): a message
 * nested 50 deep would be written fine and then make every read of the thread fail. 40 leaves a
 * margin; real messages nest about 5 levels plus their tool-call arguments.
 */
export const MAX_MESSAGE_DEPTH = 40;

/** The state keys a fork may write (when the agent's graph has that channel). */
const WRITABLE_KEYS = ["messages", "subagent_runs"] as const;

/** Message types a fork may write, as `type` or `role` (LangChain's names and the OpenAI ones). */
const MESSAGE_TYPES = [
  "human",
  "user",
  "ai",
  "assistant",
  "system",
  "developer",
  "tool",
  "remove",
] as const;

const contentSchema = z.union([
  z.string(),
  z.array(z.union([z.string(), z.looseObject({ type: z.string() })])),
]);

const toolCallSchema = z.looseObject({
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()),
  id: z.string().optional(),
});

/** One message as the API writes it: LangChain's dict form (`{type, content, id, …}`). */
const messageSchema = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: contentSchema.optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(toolCallSchema).optional(),
});

const MESSAGE_FIX = `use type (or role) ${MESSAGE_TYPES.map((type) => `"${type}"`).join(", ")}, with content a string or a list of content blocks; "tool" needs tool_call_id and "remove" the id of a message in the thread`;

/** The graph's node names (for `as_node`) and state keys, read from the compiled graph. */
function graphShape(graph: AgentGraph): { nodes: string[]; channels: string[] } {
  // `createAgent` returns a wrapper whose `graph` is the compiled StateGraph (as in
  // `graphs/hosted-graph.ts`); its `nodes` and `channels` are what `updateState` checks.
  const inner = (graph as { graph?: { nodes?: unknown; channels?: unknown } }).graph;
  const names = (record: unknown) =>
    typeof record === "object" && record !== null ? Object.keys(record) : [];
  return {
    // `__start__` and other dunder nodes are LangGraph's own.
    nodes: names(inner?.nodes).filter((name) => !name.startsWith("__")),
    channels: names(inner?.channels),
  };
}

/**
 * Refuses a fork LangGraph would fail on or store wrongly.
 *
 * @param messageIds ids of the messages in the state the fork branches from (a `remove` must
 *   name one of them).
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field (`values.messages[2].type`,
 *   `values.subagent_runs`, `as_node`, …).
 */
export function checkForkEdit(
  graph: AgentGraph,
  edit: { values: Record<string, unknown>; asNode?: string | undefined },
  messageIds: ReadonlySet<string>,
): void {
  const shape = graphShape(graph);
  if (edit.asNode !== undefined && !shape.nodes.includes(edit.asNode)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `as_node ${JSON.stringify(edit.asNode)} is not a node of this agent's graph: use one of ${shape.nodes.map((node) => `"${node}"`).join(", ")}, or leave it out (the last node that ran)`,
      { field: "as_node" },
    );
  }
  const writable = WRITABLE_KEYS.filter((key) => shape.channels.includes(key));
  for (const key of Object.keys(edit.values)) {
    if (!(writable as readonly string[]).includes(key)) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `values.${key} is not state a fork can write: use ${writable.join(" or ")}`,
        { field: `values.${key}` },
      );
    }
  }
  if ("messages" in edit.values) checkMessages(edit.values.messages, messageIds);
  if ("subagent_runs" in edit.values) {
    const parsed = z.array(subagentRunSchema).safeParse(edit.values.subagent_runs);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = pathText(issue?.path);
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `values.subagent_runs${at}: ${issue?.message ?? "invalid"}: send a list of task records as the thread's state holds them ({ id, subagent_type, child_thread_id, status, … })`,
        { field: "values.subagent_runs" },
      );
    }
  }
}

function checkMessages(value: unknown, stateMessageIds: ReadonlySet<string>): void {
  // The reducer takes one message or a list of them; a `remove` may also name a message added
  // earlier in the same list.
  const list = Array.isArray(value) ? value : [value];
  const messageIds = new Set(stateMessageIds);
  const fieldOf = (index: number) =>
    Array.isArray(value) ? `values.messages[${index}]` : "values.messages";
  list.forEach((item, index) => {
    const field = fieldOf(index);
    const parsed = messageSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = pathText(issue?.path);
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `${field}${at}: ${issue?.message ?? "invalid"}: ${MESSAGE_FIX}`,
        { field: `${field}${at}` },
      );
    }
    const tooDeep = findTooDeep(item, MAX_MESSAGE_DEPTH);
    if (tooDeep) {
      const at = formatJsonPath(tooDeep.path, 3);
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `${field}${at.startsWith("[") || at === "" ? at : `.${at}`} nests deeper than ${MAX_MESSAGE_DEPTH} levels, which a checkpoint cannot be read back with: flatten it (for example send nested data as a JSON string)`,
        { field },
      );
    }
    const message = parsed.data;
    // LangChain reads `role` when a message has one, else `type`: both must be known.
    for (const key of ["type", "role"] as const) {
      const value = message[key];
      if (value !== undefined && !(MESSAGE_TYPES as readonly string[]).includes(value)) {
        throw new SubagentGraphError(
          ErrorCode.Validation,
          `${field}.${key} ${JSON.stringify(value)} is not a message type: ${MESSAGE_FIX}`,
          { field: `${field}.${key}` },
        );
      }
    }
    const type = message.role ?? message.type;
    if (type === undefined) {
      throw new SubagentGraphError(ErrorCode.Validation, `${field} has no type: ${MESSAGE_FIX}`, {
        field: `${field}.type`,
      });
    }
    if (type === "tool" && !message.tool_call_id) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `${field}.tool_call_id is missing: a "tool" message answers a tool call, so name its id`,
        { field: `${field}.tool_call_id` },
      );
    }
    if (type === "remove") {
      if (!message.id || !(messageIds.has(message.id) || message.id === REMOVE_ALL_MESSAGES)) {
        throw new SubagentGraphError(
          ErrorCode.Validation,
          `${field}.id ${JSON.stringify(message.id ?? null)} names no message of the thread: a "remove" message needs the id of a message in the state it forks from (or "${REMOVE_ALL_MESSAGES}")`,
          { field: `${field}.id` },
        );
      }
    } else if (message.content === undefined) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `${field}.content is missing: ${MESSAGE_FIX}`,
        { field: `${field}.content` },
      );
    } else if (message.id) {
      messageIds.add(message.id);
    }
  });
}

/** A zod issue's path as `[0].content` (appended to the field it is inside). */
function pathText(path: readonly PropertyKey[] | undefined): string {
  return (path ?? [])
    .map((step) => (typeof step === "number" ? `[${step}]` : `.${String(step)}`))
    .join("");
}
