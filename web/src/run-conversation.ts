/**
 * One run's conversation as its stream goes, read through the SDK's own stream handling: the
 * `StreamManager` of `@langchain/langgraph-sdk/ui`, the engine of LangChain's `useStream` hook,
 * with its `MessageTupleManager` and its subagent tracking. It merges the run's tokens into
 * messages, applies `values`, and keeps the messages of a subagent (events under `tools:<task
 * id>`, see `contract.ts`) out of the main list and on the subagent of its `task` call: the
 * console shows what every LangGraph frontend shows. What the SDK does not know (our cards'
 * records, child threads, requests for approval) is read by `applyRunEvent` (`chat-state.ts`).
 * No DOM here: unit-tested in Node.
 */

import type { Message } from "@langchain/langgraph-sdk";
import { MessageTupleManager, StreamManager } from "@langchain/langgraph-sdk/ui";
import { TASK_TOOL_NAME } from "../../contract.js";
import {
  applyRunEvent,
  type ChatMessage,
  type Conversation,
  toChatMessage,
  withMessages,
} from "./chat-state.js";

/** A thread's state as the stream manager holds it: its messages, as the wire carries them. */
type Values = { messages?: Message[] } & Record<string, unknown>;

/** One event of a run's stream, as the SDK's client yields it. */
interface StreamEvent {
  event: string;
  data: unknown;
}

/** Options of {@link RunConversation}. */
export interface RunConversationOptions {
  /**
   * The stream replays the run from its first event over the stored state (a rejoin after a
   * reload), so a message it streams again starts over (the SDK's `isReplaying`).
   */
  replay?: boolean;
  /** Called after every change of {@link RunConversation.conversation}. */
  onChange?: (conversation: Conversation) => void;
}

/**
 * Folds a run's events, pushed as they come, into the conversation shown over `base`. The SDK
 * applies events in order, a microtask after {@link push}; {@link end} waits for the last.
 */
export class RunConversation {
  readonly #manager: StreamManager<Values>;
  readonly #events = new EventQueue();
  readonly #initial: Values;
  readonly #done: Promise<void>;
  readonly #onChange: ((conversation: Conversation) => void) | undefined;
  /** Our own reading of the events (`applyRunEvent`); its messages are the base's. */
  #ours: Conversation;
  #conversation: Conversation;

  constructor(base: Conversation, options: RunConversationOptions = {}) {
    this.#ours = base;
    this.#conversation = base;
    this.#onChange = options.onChange;
    this.#initial = { messages: base.messages.map(wireMessage) };
    this.#manager = new StreamManager<Values>(new MessageTupleManager(), {
      throttle: false,
      filterSubagentMessages: true,
      subagentToolNames: [TASK_TOOL_NAME],
    });
    // The `task` calls already in the thread (a resumed or rejoined run's subagents): the SDK
    // matches a subagent's events to them as to the calls this run streams.
    this.#manager.reconstructSubagents(this.#initial.messages ?? []);
    this.#manager.subscribe(() => this.#refresh());
    const events = this.#events;
    this.#done = this.#manager.start(
      // The manager reads the events as a generator of the SDK's stream events.
      async () => events.drain() as AsyncGenerator<never>,
      {
        getMessages: (values) => values.messages ?? [],
        setMessages: (values, messages) => ({ ...values, messages }),
        initialValues: this.#initial,
        callbacks: {},
        isReplaying: options.replay === true,
        // The page reads the thread's stored state once the run ends (chat-store.ts).
        onSuccess: () => undefined,
        // Only a failure of the manager itself lands here; it has logged it.
        onError: () => undefined,
      },
    );
  }

  /** The conversation so far. */
  get conversation(): Conversation {
    return this.#conversation;
  }

  /** Feeds the run's next event (ignored once the stream has ended). */
  push(event: string, data: unknown): void {
    if (this.#events.closed) return;
    this.#ours = applyRunEvent(this.#ours, event, data);
    // The run's error is ours to show (`applyRunEvent`); the manager would log it as a crash.
    if (event !== "error") this.#events.push({ event, data });
    this.#refresh();
  }

  /** Every event pushed so far applied: the conversation then. */
  async settled(): Promise<Conversation> {
    await this.#events.idle();
    return this.#conversation;
  }

  /** The stream has ended: the conversation once its last event is applied. */
  async end(): Promise<Conversation> {
    this.#events.close();
    await this.#done;
    this.#refresh();
    return this.#conversation;
  }

  #refresh(): void {
    const values = this.#manager.values;
    // A `values` event holding only an interrupt is not a state: the messages stay.
    const raw = Array.isArray(values?.messages) ? values.messages : (this.#initial.messages ?? []);
    const messages = raw.map(toChatMessage).filter((message) => message !== undefined);
    const subagents = new Map<string, ChatMessage[]>();
    for (const [id, subagent] of this.#manager.getSubagents()) {
      subagents.set(
        id,
        subagent.messages.map(toChatMessage).filter((message) => message !== undefined),
      );
    }
    this.#conversation = withMessages(this.#ours, messages, subagents);
    this.#onChange?.(this.#conversation);
  }
}

/** A message of the page as the wire carries it, for the stream manager's initial values. */
function wireMessage(message: ChatMessage): Message {
  const type = message.role === "assistant" ? "ai" : message.role;
  return {
    id: message.id,
    type,
    content: message.text,
    ...(message.toolCalls.length ? { tool_calls: message.toolCalls } : {}),
    ...(message.toolCallId ? { tool_call_id: message.toolCallId } : {}),
    ...(message.toolName ? { name: message.toolName } : {}),
  } as Message;
}

/**
 * Events pushed by the page's follower and pulled by the stream manager, which reads its stream
 * as an async generator. Knows when the reader has applied everything pushed (it asks for more).
 */
class EventQueue {
  readonly #items: StreamEvent[] = [];
  #closed = false;
  #wake: (() => void) | undefined;
  #waiting = false;
  #idle: (() => void)[] = [];

  get closed(): boolean {
    return this.#closed;
  }

  push(item: StreamEvent): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** Resolves once the reader waits with nothing left to read (or has stopped reading). */
  idle(): Promise<void> {
    if (this.#waiting && this.#items.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async *drain(): AsyncGenerator<StreamEvent> {
    try {
      for (;;) {
        const item = this.#items.shift();
        if (item) {
          this.#waiting = false;
          yield item;
          continue;
        }
        if (this.#closed) return;
        this.#waiting = true;
        this.#releaseIdle();
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      // The reader stopped (the stream ended, or an `error` event ended its reading).
      this.#closed = true;
      this.#waiting = true;
      this.#items.length = 0;
      this.#releaseIdle();
    }
  }

  #releaseIdle(): void {
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }
}
