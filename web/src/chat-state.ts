/**
 * The conversation the chat page shows, and what our own events say about it. Pure functions over
 * plain data (no DOM), unit-tested without a browser.
 *
 * Messages are not merged here: the SDK's stream manager (`run-conversation.ts`) merges a run's
 * tokens, keeps a subagent's messages out of the main list and on its own card, and applies
 * `values`, as LangChain's hooks do. This file reads the rest of a run's stream, the root
 * namespace's events only (a subagent's come under `tools:<task id>`, see `contract.ts`):
 * - `metadata`: the run's id (for cancelling);
 * - `custom`: the task tool's `subagent_started` (the child's thread id and start time),
 *   `subagent_waiting` (the child paused on a request for approval) and `subagent_finished`
 *   (the child's record);
 * - `updates` and `values`: `subagent_runs` records, and `__interrupt__`, the requests for
 *   approval (`approvals.ts`). A `values` event holding one is not a state: it holds nothing else;
 * - `error`: the run's error.
 */

import { SUBAGENT_EVENTS, TASK_TOOL_NAME } from "../../contract.js";
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
  /** The subagent's own messages as its run streamed them (none for a card read from state). */
  messages: ChatMessage[];
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

/** Longest live preview kept on a card. */
const PREVIEW_CHARS = 240;

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
      if (call.name !== TASK_TOOL_NAME) continue;
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

/**
 * Applies what one stream event says besides its messages: the run id, cards, records, requests
 * for approval and the run's error. A subagent's events (any namespace) and `messages` events
 * leave the conversation as it was: the SDK reads those (`run-conversation.ts`).
 */
export function applyRunEvent(
  conversation: Conversation,
  event: string,
  data: unknown,
): Conversation {
  const [mode, ...namespace] = event.split("|");
  if (namespace.length > 0) return conversation;
  switch (mode) {
    case "metadata":
      return { ...conversation, runId: (data as { run_id?: string } | null)?.run_id };
    case "updates":
      return applyUpdates(conversation, data);
    case "custom":
      return applyCustom(conversation, data);
    case "values":
      return isInterruptOnly(data)
        ? withApprovals(conversation, data)
        : applyValues(conversation, data);
    case "error":
      return { ...conversation, error: errorText(data) };
    default:
      return conversation;
  }
}

/** A state's records on their cards, and the requests of its `waiting` records. */
function applyValues(conversation: Conversation, data: unknown): Conversation {
  let next = withRecords(conversation, (data as { subagent_runs?: unknown } | null)?.subagent_runs);
  const waiting = waitingApprovalsOf(data);
  if (waiting.length) next = { ...next, approvals: mergeApprovals(next.approvals, waiting) };
  return next;
}

function withRecords(conversation: Conversation, records: unknown): Conversation {
  if (!Array.isArray(records)) return conversation;
  let next = conversation;
  for (const record of records as SubagentRunRecord[]) {
    next = withCard(next, cardFromRecord(record, next.cards[record.id]));
  }
  return next;
}

/**
 * The conversation with `messages` (as the SDK holds them), a card for each `task` call that has
 * none yet, and each card's subagent messages as the SDK holds them (by task call id). A running
 * card's rounds and preview follow its messages until its record says how it ended.
 */
export function withMessages(
  conversation: Conversation,
  messages: ChatMessage[],
  subagentMessages: ReadonlyMap<string, ChatMessage[]>,
): Conversation {
  const cards = { ...conversation.cards };
  for (const message of messages) {
    for (const call of message.toolCalls) {
      if (call.name === TASK_TOOL_NAME && !cards[call.id]) cards[call.id] = cardFromCall(call);
    }
  }
  for (const [id, own] of subagentMessages) {
    const card = cards[id];
    // The tools task that runs the subagent also streams the `task` call's result there: that
    // message is the parent's, shown with the call, not one of the subagent's own.
    if (card)
      cards[id] = withOwnMessages(
        card,
        own.filter((message) => message.toolCallId !== id),
      );
  }
  return { ...conversation, messages, cards };
}

function withOwnMessages(card: SubagentCard, messages: ChatMessage[]): SubagentCard {
  if (card.status !== "running" && card.status !== "waiting") return { ...card, messages };
  const answers = messages.filter((message) => message.role === "assistant");
  const last = answers.at(-1);
  const calls = last?.toolCalls.map((call) => call.name) ?? [];
  const live = last?.text || (calls.length ? `calling ${calls.join(", ")}…` : "");
  return {
    ...card,
    messages,
    rounds: Math.max(card.rounds, answers.length),
    preview: live ? tail(live) : card.preview,
  };
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
    next = withRecords(next, (update as { subagent_runs?: unknown } | null)?.subagent_runs);
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
      name: TASK_TOOL_NAME,
      args: { subagent_type: event?.subagent_type, description: event?.description },
    });
  if (event?.type === SUBAGENT_EVENTS.started && event.id) {
    const current = cardOf(event.id);
    return withCard(conversation, {
      ...current,
      status: "running",
      childThreadId: event.child_thread_id,
      startedAt: event.started_at,
    });
  }
  if (event?.type === SUBAGENT_EVENTS.waiting && event.id) {
    const current = cardOf(event.id);
    const next = withCard(conversation, {
      ...current,
      status: "waiting",
      childThreadId: event.child_thread_id ?? current.childThreadId,
      startedAt: event.started_at ?? current.startedAt,
    });
    return { ...next, approvals: mergeApprovals(next.approvals, approvalsOf([event.approval])) };
  }
  if (event?.type === SUBAGENT_EVENTS.finished && event.run) {
    return withCard(conversation, cardFromRecord(event.run, conversation.cards[event.run.id]));
  }
  return conversation;
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
    messages: [],
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
    messages: previous?.messages ?? [],
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
