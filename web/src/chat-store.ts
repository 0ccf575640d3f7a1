/**
 * The chat page's state and what the page does with it: the agents and conversations listed, the
 * conversation on screen, the message being written, and the runs followed (`live-runs.ts`, one
 * per conversation). The page (`pages/chat-page.tsx`) only draws a {@link ChatStore}'s
 * {@link ChatStore.state} and calls its operations; `components/use-chat.ts` ties one to the
 * page's life. No DOM here (navigation is a callback): unit-tested in Node against a scripted
 * API (`test/web/chat-store.test.ts`).
 */

import type { AgentRecord } from "./agent-form-model.js";
import { ApiError, errorText } from "./api-error.js";
import type { ChatApi, ThreadInfo } from "./api-types.js";
import type { Decision, PendingApproval } from "./approvals.js";
import {
  answerRun,
  messageRun,
  RENAMED_TITLE_CHARS,
  TITLE_CHARS,
  withAttachments,
} from "./chat-requests.js";
import {
  type Conversation,
  conversationFromState,
  emptyConversation,
  type SubagentCard,
  withApprovalSent,
  withHumanMessage,
} from "./chat-state.js";
import { checkpointBefore } from "./fork-point.js";
import { type LiveRun, LiveRuns, type RunEnd } from "./live-runs.js";
import { threadTitle } from "./text.js";

/** A human message being edited: its id and the new text. */
export interface Editing {
  id: string;
  text: string;
}

/** Everything the chat page shows that is not derived from something else. */
export interface ChatState {
  /** The agents one may chat with (no subagents); undefined until listed. */
  agents: AgentRecord[] | undefined;
  /** Every agent the user may see, subagents included: cards show a subagent's name. */
  allAgents: AgentRecord[];
  agentId: string | undefined;
  threads: ThreadInfo[];
  /** The stored state of the thread on screen (a followed run's conversation wins over it). */
  stored: Conversation;
  draft: string;
  /** The thread of a new message is being created or titled. */
  sending: boolean;
  error: string | undefined;
  notice: string | undefined;
  /** Files attached from the message box since the last send (already in the uploads). */
  attached: string[];
  attaching: boolean;
  /** The human message being edited (its id and the new text). */
  editing: Editing | undefined;
  /** Bumped whenever the thread's files may have changed (the files panel lists them again). */
  filesVersion: number;
  /** The conversations' drawer is open (phones). */
  drawerOpen: boolean;
}

/** Options of {@link ChatStore}. */
export interface ChatStoreOptions {
  /** Runs after every change of the state or of a followed run (to draw the page again). */
  onChange: () => void;
  /** Goes to a page of the console (`#/chat/<thread id>`, `#/chat`). */
  navigate: (hash: string) => void;
}

/** Conversations listed in the sidebar. */
const THREADS_LISTED = 100;

/** The error code of a new message sent to a thread that waits for approval. */
const AWAITING_APPROVAL = "AWAITING_APPROVAL";

const AGENT_DELETED =
  "This conversation's agent no longer exists (deleted, or no longer shared with you): choose another agent to go on.";
const NO_AGENT = "Choose an agent first (create one on the Agents page if there is none).";
const HISTORY_TOO_SHORT =
  "Cannot resend this message: the thread's history no longer holds the point before it (it is older than the last 200 states).";

function initialState(): ChatState {
  return {
    agents: undefined,
    allAgents: [],
    agentId: undefined,
    threads: [],
    stored: emptyConversation(),
    draft: "",
    sending: false,
    error: undefined,
    notice: undefined,
    attached: [],
    attaching: false,
    editing: undefined,
    filesVersion: 0,
    drawerOpen: false,
  };
}

/**
 * The chat page's one owner of state. Runs are followed per conversation: opening one rejoins its
 * running run, a run goes on (and is followed) while another conversation is on screen, and a
 * run's end draws only when its conversation is the one on screen.
 */
export class ChatStore {
  readonly #api: ChatApi;
  readonly #options: ChatStoreOptions;
  readonly #runs: LiveRuns;
  #state: ChatState = initialState();
  /** The thread on screen (undefined: a new conversation), for a run that ends to know. */
  #threadId: string | undefined;
  /** Bumped by each {@link open}: a slower opening of an earlier thread is dropped. */
  #opening = 0;

  constructor(api: ChatApi, options: ChatStoreOptions) {
    this.#api = api;
    this.#options = options;
    this.#runs = new LiveRuns(api, options.onChange);
  }

  get state(): ChatState {
    return this.#state;
  }

  /** The run followed on the thread on screen (going, or ended and not yet released). */
  get followed(): LiveRun | undefined {
    return this.#runs.get(this.#threadId);
  }

  /** The conversation on screen: the followed run's, else the thread's stored state. */
  get conversation(): Conversation {
    return this.followed?.conversation ?? this.#state.stored;
  }

  /** The run going on in this conversation (an ended one waiting for release is not). */
  get live(): LiveRun | undefined {
    const followed = this.followed;
    return followed?.ended ? undefined : followed;
  }

  /** The thread waits for a person: a new message would be refused (AWAITING_APPROVAL). */
  get waiting(): boolean {
    return this.conversation.approvals.length > 0;
  }

  /** The thread on screen as listed. */
  get thread(): ThreadInfo | undefined {
    return this.#state.threads.find((candidate) => candidate.thread_id === this.#threadId);
  }

  /** The agent chosen is not (or no longer) one the user may chat with. */
  get agentMissing(): boolean {
    const { agents, agentId } = this.#state;
    return agents !== undefined && agentId !== undefined && !agents.some((a) => a.id === agentId);
  }

  /** Threads with a run going (followed here, or busy on the server). */
  get running(): Set<string> {
    return new Set([
      ...this.#runs.threadIds(),
      ...this.#state.threads.filter((t) => t.status === "busy").map((t) => t.thread_id),
    ]);
  }

  /** Agent names by slug (a card names its subagent by slug). */
  get names(): Map<string, string> {
    return new Map(this.#state.allAgents.map((agent) => [agent.slug, agent.name]));
  }

  /** An agent's name by id ("" when unknown). */
  agentName(id: unknown): string {
    return this.#state.allAgents.find((agent) => agent.id === id)?.name ?? "";
  }

  /** Who asks for approval: the subagent the request names, else the conversation's agent. */
  asker(approval: PendingApproval): string {
    const slug = approval.value.subagent?.subagent_type;
    return slug
      ? (this.names.get(slug) ?? slug)
      : this.agentName(this.#state.agentId) || "the agent";
  }

  /** The request for approval a subagent's card waits on, if any. */
  approvalOf(card: SubagentCard): string | undefined {
    return this.conversation.approvals.find(
      (entry) => entry.value.subagent?.tool_call_id === card.id,
    )?.id;
  }

  /**
   * Says which thread is on screen as soon as the page is drawn for it, before {@link open} has
   * read it: a run that ends meanwhile must not draw over another conversation.
   */
  show(threadId: string | undefined): void {
    this.#threadId = threadId;
  }

  /** Lists the agents (choosing the default one if none is chosen yet) and the conversations. */
  async load(): Promise<void> {
    const listing = this.loadThreads();
    try {
      const visible = await this.#api.listAgents(true);
      const agents = visible.filter((agent) => !agent.is_subagent);
      const agentId =
        this.#state.agentId ?? (agents.find((agent) => agent.is_default) ?? agents[0])?.id;
      this.#set({ allAgents: visible, agents, agentId });
    } catch (caught) {
      this.#set({ error: errorText(caught) });
    }
    await listing;
  }

  async loadThreads(): Promise<void> {
    try {
      this.#set({ threads: await this.#api.searchThreads(THREADS_LISTED) });
      this.#adoptThreadAgent();
    } catch (caught) {
      this.#set({ error: errorText(caught) });
    }
  }

  /** Opens a conversation: its stored state, then its running run (if any) rejoined. */
  async open(threadId: string | undefined): Promise<void> {
    this.#opening += 1;
    const ticket = this.#opening;
    this.#threadId = threadId;
    this.#set({
      error: undefined,
      notice: undefined,
      editing: undefined,
      stored: emptyConversation(),
    });
    this.#adoptThreadAgent();
    if (!threadId || this.#runs.get(threadId)) return;
    const current = () => ticket === this.#opening;
    try {
      const state = await this.#api.threadState(threadId);
      if (!current()) return;
      const base = conversationFromState(state);
      this.#set({ stored: base });
      const running = await this.#api.runningRun(threadId);
      if (!current() || !running || this.#runs.get(threadId)) return;
      await this.#finished(await this.#runs.join(threadId, running.run_id, base));
    } catch (caught) {
      if (current()) this.#set({ error: errorText(caught) });
    }
  }

  /** Stops following every run (the page goes away; the runs go on on the server). */
  dispose(): void {
    this.#opening += 1;
    this.#runs.dispose();
  }

  chooseAgent(agentId: string): void {
    this.#set({ agentId });
  }

  setDraft(draft: string): void {
    this.#set({ draft });
  }

  /** Starts (a message id and its text) or ends (undefined) editing a human message. */
  edit(editing: Editing | undefined): void {
    this.#set({ editing });
  }

  setDrawerOpen(drawerOpen: boolean): void {
    this.#set({ drawerOpen });
  }

  /** The thread on screen, created when the conversation is new (titled by `title` if given). */
  async ensureThread(title?: string): Promise<string> {
    if (this.#threadId) return this.#threadId;
    const created = await this.#api.createThread(
      title ? { title: title.slice(0, TITLE_CHARS) } : {},
    );
    this.#threadId = created.thread_id;
    this.#options.navigate(`#/chat/${encodeURIComponent(created.thread_id)}`);
    return created.thread_id;
  }

  /** Sends the draft (with the files attached) as a new message, and follows its run. */
  async send(): Promise<void> {
    const { draft, sending, agentId, attached: files } = this.#state;
    const text = draft.trim();
    if (!text || sending || this.live || this.waiting) return;
    if (!agentId || this.agentMissing) {
      this.#set({ error: this.agentMissing ? AGENT_DELETED : NO_AGENT });
      return;
    }
    const threadId = this.#threadId;
    const thread = this.thread;
    const before = this.conversation;
    const content = withAttachments(text, files);
    this.#set({ error: undefined, notice: undefined, sending: true, draft: "", attached: [] });
    let target: string;
    try {
      target = await this.ensureThread(text);
      // A conversation started by an upload has no title yet: its first message names it.
      if (threadId && before.messages.length === 0 && typeof thread?.metadata?.title !== "string") {
        await this.#api.updateThread(target, { title: text.slice(0, TITLE_CHARS) });
      }
    } catch (caught) {
      this.#set({ draft: text, attached: files, error: errorText(caught), sending: false });
      return;
    }
    this.#set({ sending: false });
    const ending = this.#runs.start(
      target,
      withHumanMessage(before, content),
      messageRun(agentId, content),
    );
    // Listed (and marked running) at once, not when the run ends.
    void this.loadThreads();
    const end = await ending;
    if (!end.accepted && this.#threadId === target) {
      // Refused (busy thread, bad input, server down): the message was not sent; give it back.
      const { draft: typed, attached: now } = this.#state;
      this.#set({ stored: before, draft: typed || text, attached: now.length ? now : files });
    }
    await this.#finished(end);
  }

  /** Uploads a file chosen in the message box into the conversation's uploads. */
  async attach(file: File): Promise<void> {
    this.#set({ attaching: true, error: undefined });
    try {
      const target = await this.ensureThread();
      const entry = await this.#api.uploadFile(target, file);
      const others = this.#state.attached.filter((path) => path !== entry.path);
      this.#set({
        attached: [...others, entry.path],
        filesVersion: this.#state.filesVersion + 1,
      });
    } catch (caught) {
      this.#set({ error: `Cannot attach "${file.name}": ${errorText(caught)}` });
    } finally {
      this.#set({ attaching: false });
    }
  }

  /**
   * Sends `text` in place of the human message `messageId` (edit-and-resend; with its own text,
   * a regenerate): a run from the checkpoint just before it, which forks the thread there.
   */
  async resend(messageId: string, text: string): Promise<void> {
    const threadId = this.#threadId;
    const { agentId } = this.#state;
    if (!threadId || !agentId || this.agentMissing || this.live) return;
    const conversation = this.conversation;
    const index = conversation.messages.findIndex((message) => message.id === messageId);
    if (index === -1 || !text.trim()) return;
    this.#set({ editing: undefined, error: undefined, notice: undefined });
    const prior = conversation.messages.slice(0, index);
    let checkpointId: string | undefined;
    try {
      const history = await this.#api.threadHistory(threadId);
      checkpointId = checkpointBefore(
        history,
        prior.map((message) => message.id),
      );
    } catch (caught) {
      this.#set({ error: `Cannot resend: ${errorText(caught)}` });
      return;
    }
    if (!checkpointId) {
      this.#set({ error: HISTORY_TOO_SHORT });
      return;
    }
    const base = withHumanMessage({ ...conversation, messages: prior }, text.trim());
    await this.#finished(
      await this.#runs.start(threadId, base, messageRun(agentId, text.trim(), checkpointId)),
    );
  }

  /**
   * Answers request `id` with a run that resumes the thread and follows it; resolves with the
   * server's refusal, if any.
   */
  async answer(id: string, decisions: Decision[]): Promise<string | undefined> {
    const threadId = this.#threadId;
    const { agentId } = this.#state;
    if (!threadId || !agentId || this.live) return "A run is going on: answer when it has ended.";
    this.#set({ error: undefined, notice: undefined });
    const end = await this.#runs.start(
      threadId,
      withApprovalSent(this.conversation, id),
      answerRun(agentId, id, decisions),
    );
    // A refusal (422: the decisions do not fit) is shown on its card, not on the page.
    await this.#finished(end.accepted ? end : { ...end, error: undefined });
    return end.accepted ? undefined : (end.error as Error | undefined)?.message;
  }

  /** Asks the server to cancel the run of the conversation on screen (only that one's). */
  async cancel(): Promise<void> {
    if (!this.#threadId) return;
    try {
      await this.#runs.cancel(this.#threadId);
    } catch (caught) {
      this.#set({ error: `Cannot cancel: ${errorText(caught)}` });
    }
  }

  /** Goes to a new conversation (the drawer closes). */
  startNew(): void {
    this.#set({ stored: emptyConversation(), draft: "", drawerOpen: false });
    this.#options.navigate("#/chat");
  }

  async rename(thread: ThreadInfo, title: string): Promise<void> {
    try {
      await this.#api.updateThread(thread.thread_id, {
        title: title.slice(0, RENAMED_TITLE_CHARS),
      });
      await this.loadThreads();
    } catch (caught) {
      this.#set({ error: `Cannot rename: ${errorText(caught)}` });
    }
  }

  /** Deletes a conversation; the one on screen gives way to a new one. */
  async remove(thread: ThreadInfo): Promise<void> {
    try {
      await this.#api.deleteThread(thread.thread_id);
      if (thread.thread_id === this.#threadId) this.startNew();
      await this.loadThreads();
    } catch (caught) {
      this.#set({ error: `Cannot delete "${threadTitle(thread)}": ${errorText(caught)}` });
    }
  }

  /** After a run: the stored state is the truth (a cancelled run was repaired there). */
  async #finished(end: RunEnd): Promise<void> {
    const { run } = end;
    const shown = () => this.#threadId === run.threadId;
    if (end.error !== undefined && shown()) this.#set({ error: refusalText(end.error) });
    if (end.accepted) {
      try {
        const state = await this.#api.threadState(run.threadId);
        if (shown()) {
          this.#set({ stored: conversationFromState(state, run.conversation) });
          if (run.cancelRequested) this.#set({ notice: "The run was cancelled." });
          else if (run.conversation.error) this.#set({ error: run.conversation.error });
        }
      } catch {
        if (shown()) this.#set({ stored: run.conversation });
      }
      this.#set({ filesVersion: this.#state.filesVersion + 1 });
    }
    // The stored state is on screen now: the run's own copy can go.
    this.#runs.release(run);
    void this.loadThreads();
  }

  /** A thread keeps the agent it started with: it is chosen when the thread is listed or opened. */
  #adoptThreadAgent(): void {
    const threadAgent = this.thread?.metadata?.assistant_id;
    if (typeof threadAgent === "string" && threadAgent !== this.#state.agentId) {
      this.#set({ agentId: threadAgent });
    }
  }

  #set(change: Partial<ChatState>): void {
    this.#state = { ...this.#state, ...change };
    this.#options.onChange();
  }
}

/** What a run's failure says on the page; a busy thread's refusal says what to do. */
function refusalText(error: unknown): string {
  return error instanceof ApiError && error.status === 409 && error.code !== AWAITING_APPROVAL
    ? `${error.message} (wait for the running answer, or cancel it)`
    : errorText(error);
}
