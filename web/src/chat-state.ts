/**
 * The conversation the chat page shows, and how run stream events change it. Pure functions over
 * plain data (no DOM), so the stream handling is unit-tested without a browser.
 *
 * Sources, in the order a run produces them (`stream_mode` values, updates, messages-tuple and
 * custom, with `stream_subgraphs`):
 * - `metadata`: the run's id (for cancelling);
 * - `messages`: the main agent's tokens, appended to the message with the chunk's id;
 * - `updates`: complete messages per node; an AI message's `task` calls become cards;
 * - `custom`: the task tool's `subagent_started` (the child's thread id and start time),
 *   `subagent_waiting` (the child paused on a request for approval) and `subagent_finished`
 *   (the child's record);
 * - `updates|subagent:<child>` / `messages|subagent:<child>`: the child's own steps (rounds) and
 *   tokens (a live preview on its card);
 * - `values`: the whole state, which wins over everything streamed before it;
 * - `__interrupt__` in root `updates` and `values`: requests for approval (`approvals.ts`). A
 *   `values` event holding one is not a state: it holds nothing else.
 */

import type { SubagentRun } from "../../middleware/subagent-runs.js";
import {
  approvalsOf,
  INTERRUPT_KEY,
  mergeApprovals,
  type PendingApproval,
  pendingFromState,
  waitingApprovalsOf,
  withoutApproval,
} from "./approvals.js";
import { contentText } from "./text.js";

/** How a card's subagent stands: running, or how its `task` call ended. */
export type CardStatus = "running" | "waiting" | "completed" | "failed" | "cancelled" | "timeout";

/** One message as the page shows it. */
export interface ChatMessage {
  id: string;
  role: "human" | "assistant" | "tool";
  text: string;
  /** Tool calls of an assistant message (`task` calls get a card each). */
  toolCalls: { id: string; name: string; args: Record<string, unknown> }[];
  /** For a tool message: the call it answers. */
  toolCallId?: string;
  /** For a tool message: the tool's name. */
  toolName?: string;
}

/** A `task` call's live card. */
export interface SubagentCard {
  /** The task call's id (= the record's id). */
  id: string;
  subagentType: string;
  description: string;
  status: CardStatus;
  childThreadId: string | undefined;
  /** ISO time the child started; undefined until it has. */
  startedAt: string | undefined;
  finishedAt: string | undefined;
  rounds: number;
  maxRoundsReached: boolean;
  error: string | undefined;
  /** The child's latest words while it runs, then its answer's preview. */
  preview: string;
  artifacts: string[];
}

/** Everything the chat page shows of one thread. */
export interface Conversation {
  messages: ChatMessage[];
  /** Cards by task call id. */
  cards: Record<string, SubagentCard>;
  /** The streaming run's id, once announced. */
  runId: string | undefined;
  /** The run's error, as the stream reported it. */
  error: string | undefined;
  /** Requests for approval the thread waits on, each answered from its own card. */
  approvals: PendingApproval[];
}

/** A `subagent_runs` record, as the state and `subagent_finished` carry it. */
export type SubagentRunRecord = SubagentRun;

/** The name of the tool that delegates to subagents. */
export const TASK_TOOL = "task";

/** Longest live preview kept on a card. */
const PREVIEW_CHARS = 240;

/** The namespace prefix a child's events come under. */
const CHILD_PREFIX = "subagent:";

/** A conversation with nothing in it. */
export function emptyConversation(): Conversation {
  return { messages: [], cards: {}, runId: undefined, error: undefined, approvals: [] };
}

/**
 * The conversation of a thread's state values (`messages`, `subagent_runs`). The requests for
 * approval known so far are kept, with those of `waiting` subagent records added: a state's
 * values do not say which requests were answered (only the thread's state does, see
 * {@link conversationFromState}).
 */
export function conversationFromValues(values: unknown, previous?: Conversation): Conversation {
  const state = (values ?? {}) as { messages?: unknown; subagent_runs?: unknown };
  const messages = Array.isArray(state.messages)
    ? state.messages.map(toChatMessage).filter((m) => m !== undefined)
    : [];
  const cards: Record<string, SubagentCard> = {};
  for (const message of messages) {
    for (const call of message.toolCalls) {
      if (call.name !== TASK_TOOL) continue;
      cards[call.id] = previous?.cards[call.id] ?? cardFromCall(call);
    }
  }
  if (Array.isArray(state.subagent_runs)) {
    for (const record of state.subagent_runs as SubagentRunRecord[]) {
      cards[record.id] = cardFromRecord(record, cards[record.id]);
    }
  }
  return {
    messages,
    cards,
    runId: previous?.runId,
    error: previous?.error,
    approvals: mergeApprovals(previous?.approvals ?? [], waitingApprovalsOf(values)),
  };
}

/**
 * The conversation of a thread's state as `threads.getState` returns it: its values, and exactly
 * the requests for approval it waits on (its tasks' interrupts).
 */
export function conversationFromState(
  state: { values?: unknown; tasks?: unknown },
  previous?: Conversation,
): Conversation {
  return { ...conversationFromValues(state.values, previous), approvals: pendingFromState(state) };
}

/**
 * The conversation once request `id` has been answered: its card goes, and the subagent it
 * paused (if any) runs again, so the resumed child's steps show on its card.
 */
export function withApprovalSent(conversation: Conversation, id: string): Conversation {
  const entry = conversation.approvals.find((candidate) => candidate.id === id);
  const next = { ...conversation, approvals: withoutApproval(conversation.approvals, id) };
  const card = entry?.value.subagent && next.cards[entry.value.subagent.tool_call_id];
  return card ? withCard(next, { ...card, status: "running", error: undefined }) : next;
}

/** The human message the page shows at once when the user sends one. */
export function withHumanMessage(conversation: Conversation, text: string): Conversation {
  const message: ChatMessage = { id: `local-${Date.now()}`, role: "human", text, toolCalls: [] };
  return { ...conversation, messages: [...conversation.messages, message], error: undefined };
}

/** Applies one stream event. Unknown events leave the conversation as it was. */
export function applyStreamEvent(
  conversation: Conversation,
  event: string,
  data: unknown,
): Conversation {
  const [mode, ...namespace] = event.split("|");
  const child = namespace.find((part) => part.startsWith(CHILD_PREFIX))?.slice(CHILD_PREFIX.length);
  if (child !== undefined) return applyChildEvent(conversation, child, mode ?? "", data);
  switch (mode) {
    case "metadata":
      return { ...conversation, runId: (data as { run_id?: string } | null)?.run_id };
    case "messages":
      return applyToken(conversation, data);
    case "updates":
      return applyUpdates(conversation, data);
    case "custom":
      return applyCustom(conversation, data);
    case "values":
      return isInterruptOnly(data)
        ? withApprovals(conversation, data)
        : conversationFromValues(data, conversation);
    case "error":
      return { ...conversation, error: errorText(data) };
    default:
      return conversation;
  }
}

function applyToken(conversation: Conversation, data: unknown): Conversation {
  if (!Array.isArray(data)) return conversation;
  const chunk = data[0] as { id?: string; type?: string; content?: unknown } | undefined;
  if (!chunk?.id || chunk.type !== "ai") return conversation;
  const text = contentText(chunk.content);
  if (!text) return conversation;
  const index = conversation.messages.findIndex((m) => m.id === chunk.id);
  if (index === -1) {
    const message: ChatMessage = { id: chunk.id, role: "assistant", text, toolCalls: [] };
    return { ...conversation, messages: [...conversation.messages, message] };
  }
  const messages = [...conversation.messages];
  const current = messages[index] as ChatMessage;
  messages[index] = { ...current, text: current.text + text };
  return { ...conversation, messages };
}

/** Whether a `values` event is LangGraph's interrupt notice rather than a state. */
function isInterruptOnly(data: unknown): data is Record<string, unknown> {
  return typeof data === "object" && data !== null && INTERRUPT_KEY in data;
}

/** The requests of an event's `__interrupt__` added to the conversation. */
function withApprovals(conversation: Conversation, data: Record<string, unknown>): Conversation {
  const added = approvalsOf(data[INTERRUPT_KEY]);
  return added.length
    ? { ...conversation, approvals: mergeApprovals(conversation.approvals, added) }
    : conversation;
}

function applyUpdates(conversation: Conversation, data: unknown): Conversation {
  if (typeof data !== "object" || data === null) return conversation;
  let next = withApprovals(conversation, data as Record<string, unknown>);
  for (const [node, update] of Object.entries(data as Record<string, unknown>)) {
    if (node === INTERRUPT_KEY) continue;
    const fields = update as { messages?: unknown; subagent_runs?: unknown } | null;
    if (Array.isArray(fields?.messages)) {
      for (const raw of fields.messages) {
        const message = toChatMessage(raw);
        if (message) next = upsertMessage(next, message);
      }
    }
    if (Array.isArray(fields?.subagent_runs)) {
      for (const record of fields.subagent_runs as SubagentRunRecord[]) {
        next = withCard(next, cardFromRecord(record, next.cards[record.id]));
      }
    }
  }
  return next;
}

function applyCustom(conversation: Conversation, data: unknown): Conversation {
  const event = data as
    | {
        type?: string;
        id?: string;
        subagent_type?: string;
        child_thread_id?: string;
        description?: string;
        started_at?: string;
        run?: SubagentRunRecord;
        approval?: unknown;
      }
    | null
    | undefined;
  // The card of the event's task call, made from the event when no message showed the call yet.
  const cardOf = (id: string) =>
    conversation.cards[id] ??
    cardFromCall({
      id,
      name: TASK_TOOL,
      args: { subagent_type: event?.subagent_type, description: event?.description },
    });
  if (event?.type === "subagent_started" && event.id) {
    const current = cardOf(event.id);
    return withCard(conversation, {
      ...current,
      status: "running",
      childThreadId: event.child_thread_id,
      startedAt: event.started_at,
    });
  }
  if (event?.type === "subagent_waiting" && event.id) {
    const current = cardOf(event.id);
    const next = withCard(conversation, {
      ...current,
      status: "waiting",
      childThreadId: event.child_thread_id ?? current.childThreadId,
      startedAt: event.started_at ?? current.startedAt,
    });
    return { ...next, approvals: mergeApprovals(next.approvals, approvalsOf([event.approval])) };
  }
  if (event?.type === "subagent_finished" && event.run) {
    return withCard(conversation, cardFromRecord(event.run, conversation.cards[event.run.id]));
  }
  return conversation;
}

/** A child's steps count its rounds while it runs; its tokens feed the card's preview. */
function applyChildEvent(
  conversation: Conversation,
  childThreadId: string,
  mode: string,
  data: unknown,
): Conversation {
  const card = Object.values(conversation.cards).find((c) => c.childThreadId === childThreadId);
  if (card?.status !== "running") return conversation;
  if (mode === "messages" && Array.isArray(data)) {
    const text = contentText((data[0] as { content?: unknown } | undefined)?.content);
    if (!text) return conversation;
    return withCard(conversation, { ...card, preview: tail(card.preview + text) });
  }
  if (mode === "updates" && typeof data === "object" && data !== null) {
    let rounds = card.rounds;
    let preview = card.preview;
    for (const update of Object.values(data as Record<string, unknown>)) {
      const messages = (update as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages)) continue;
      for (const raw of messages) {
        const message = toChatMessage(raw);
        if (message?.role !== "assistant") continue;
        rounds += 1;
        const calls = message.toolCalls.map((call) => call.name);
        preview = tail(message.text || (calls.length ? `calling ${calls.join(", ")}…` : preview));
      }
    }
    return withCard(conversation, { ...card, rounds, preview });
  }
  return conversation;
}

function upsertMessage(conversation: Conversation, message: ChatMessage): Conversation {
  const messages = [...conversation.messages];
  const index = messages.findIndex((m) => m.id === message.id);
  if (index === -1) messages.push(message);
  else messages[index] = message;
  let next: Conversation = { ...conversation, messages };
  for (const call of message.toolCalls) {
    if (call.name === TASK_TOOL && !next.cards[call.id]) next = withCard(next, cardFromCall(call));
  }
  return next;
}

function withCard(conversation: Conversation, card: SubagentCard): Conversation {
  return { ...conversation, cards: { ...conversation.cards, [card.id]: card } };
}

function cardFromCall(call: ChatMessage["toolCalls"][number]): SubagentCard {
  return {
    id: call.id,
    subagentType: String(call.args.subagent_type ?? "?"),
    description: String(call.args.description ?? ""),
    status: "running",
    childThreadId: undefined,
    startedAt: undefined,
    finishedAt: undefined,
    rounds: 0,
    maxRoundsReached: false,
    error: undefined,
    preview: "",
    artifacts: [],
  };
}

function cardFromRecord(record: SubagentRunRecord, previous?: SubagentCard): SubagentCard {
  return {
    id: record.id,
    subagentType: record.subagent_type,
    description: record.description,
    status: record.status,
    childThreadId: record.child_thread_id || previous?.childThreadId,
    startedAt: record.started_at || previous?.startedAt,
    finishedAt: record.finished_at,
    rounds: record.rounds,
    maxRoundsReached: record.max_rounds_reached,
    error: record.error ?? undefined,
    preview: record.result_preview,
    artifacts: record.artifacts ?? [],
  };
}

/** A wire message (`{type, content, id, tool_calls, …}`) as the page shows it. */
export function toChatMessage(raw: unknown): ChatMessage | undefined {
  const message = raw as {
    type?: string;
    id?: string;
    content?: unknown;
    tool_calls?: { id?: string; name?: string; args?: Record<string, unknown> }[];
    tool_call_id?: string;
    name?: string;
  } | null;
  if (!message?.type) return undefined;
  const role =
    message.type === "human"
      ? "human"
      : message.type === "ai"
        ? "assistant"
        : message.type === "tool"
          ? "tool"
          : undefined;
  if (!role) return undefined;
  const toolCalls = (message.tool_calls ?? [])
    .filter((call) => typeof call.id === "string" && typeof call.name === "string")
    .map((call) => ({ id: call.id as string, name: call.name as string, args: call.args ?? {} }));
  return {
    id: message.id ?? `${role}-${Math.random().toString(36).slice(2)}`,
    role,
    text: contentText(message.content),
    toolCalls,
    ...(message.tool_call_id ? { toolCallId: message.tool_call_id } : {}),
    ...(message.name ? { toolName: message.name } : {}),
  };
}

function tail(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `…${text.slice(-PREVIEW_CHARS)}`;
}

function errorText(data: unknown): string {
  if (typeof data === "string") return data;
  const error = data as { message?: unknown; error?: unknown } | null;
  if (typeof error?.message === "string") return error.message;
  if (typeof error?.error === "string") return error.error;
  return "the run failed";
}
