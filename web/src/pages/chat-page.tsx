import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import type { AgentRecord } from "../agent-form-model.js";
import { type Api, ApiError, type StreamMode, type ThreadInfo } from "../api.js";
import { type Decision, type PendingApproval, resumeCommand } from "../approvals.js";
import {
  type SubagentCard as Card,
  type ChatMessage,
  type Conversation,
  conversationFromState,
  emptyConversation,
  withApprovalSent,
  withHumanMessage,
} from "../chat-state.js";
import { ApprovalList, showApproval } from "../components/approval-list.js";
import { AsyncTasksPanel } from "../components/async-tasks-panel.js";
import { BranchesDialog } from "../components/branches-dialog.js";
import { ChildThreadDialog } from "../components/child-thread-dialog.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { FilesPanel } from "../components/files-panel.js";
import { MessageList } from "../components/message-list.js";
import { SubagentCard } from "../components/subagent-card.js";
import { ThreadList, threadTitle } from "../components/thread-list.js";
import { checkpointBefore } from "../fork-point.js";
import { LiveRuns, type RunEnd } from "../live-runs.js";
import { baseName } from "../text.js";

/** What a run streams: the state, node updates, tokens, and the task tool's events. */
const STREAM_MODES: StreamMode[] = ["values", "updates", "messages-tuple", "custom"];

/** Longest conversation title kept in a thread's metadata. */
const TITLE_CHARS = 60;

/** Conversations listed in the sidebar. */
const THREADS_LISTED = 100;

/** The error code of a new message sent to a thread that waits for approval. */
const AWAITING_APPROVAL = "AWAITING_APPROVAL";

/**
 * Chat with a chat agent (subagents are not offered: they are called by agents, not people).
 * A run streams its answer, and each `task` call shows a live card; the run can be cancelled.
 * Runs are followed per conversation (`LiveRuns`): a reload rejoins a running one, a dropped
 * stream is retried, and Cancel acts on the conversation on screen only.
 */
export function ChatPage(props: { api: Api; threadId: string | undefined }) {
  const { api, threadId } = props;
  const [agents, setAgents] = useState<AgentRecord[] | undefined>();
  /** Every agent the user may see, subagents included: cards show a subagent's name. */
  const [allAgents, setAllAgents] = useState<AgentRecord[]>([]);
  const [agentId, setAgentId] = useState<string | undefined>();
  const [threads, setThreads] = useState<ThreadInfo[]>([]);
  /** The stored state of the thread on screen (a followed run's conversation wins over it). */
  const [stored, setStored] = useState<Conversation>(emptyConversation);
  const [draft, setDraft] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [openCard, setOpenCard] = useState<Card | undefined>();
  const [filesVersion, setFilesVersion] = useState(0);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [deleting, setDeleting] = useState<ThreadInfo | undefined>();
  /** Files attached from the message box since the last send (already in the uploads). */
  const [attached, setAttached] = useState<string[]>([]);
  const [attaching, setAttaching] = useState(false);
  /** The human message being edited (its id and the new text). */
  const [editing, setEditing] = useState<{ id: string; text: string } | undefined>();
  const [showBranches, setShowBranches] = useState(false);
  const [, bump] = useReducer((count: number) => count + 1, 0);
  const redraw = useCallback(() => bump(undefined), []);
  const liveRuns = useMemo(() => new LiveRuns(api, redraw), [api]);
  useEffect(() => () => liveRuns.dispose(), [liveRuns]);
  /** The thread on screen, for a run that ends to know whether to draw. */
  const shownThread = useRef(threadId);
  shownThread.current = threadId;
  const bottom = useRef<HTMLDivElement>(null);

  const loadThreads = useCallback(async () => {
    try {
      setThreads(await api.searchThreads(THREADS_LISTED));
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, [api]);

  useEffect(() => {
    api.listAgents(true).then(
      (visible) => {
        const chatAgents = visible.filter((agent) => !agent.is_subagent);
        setAllAgents(visible);
        setAgents(chatAgents);
        setAgentId(
          (current) =>
            current ?? (chatAgents.find((agent) => agent.is_default) ?? chatAgents[0])?.id,
        );
      },
      (caught: Error) => setError(caught.message),
    );
    void loadThreads();
  }, [api, loadThreads]);

  /** After a run: the stored state is the truth (a cancelled run was repaired there). */
  const finished = useCallback(
    async (end: RunEnd) => {
      const { run } = end;
      if (end.error !== undefined && shownThread.current === run.threadId) {
        const caught = end.error;
        setError(
          caught instanceof ApiError && caught.status === 409 && caught.code !== AWAITING_APPROVAL
            ? `${caught.message} (wait for the running answer, or cancel it)`
            : (caught as Error).message,
        );
      }
      if (end.accepted) {
        try {
          const state = await api.threadState(run.threadId);
          if (shownThread.current === run.threadId) {
            setStored(conversationFromState(state, run.conversation));
            if (run.cancelRequested) setNotice("The run was cancelled.");
            else if (run.conversation.error) setError(run.conversation.error);
          }
        } catch {
          if (shownThread.current === run.threadId) setStored(run.conversation);
        }
        setFilesVersion((version) => version + 1);
      }
      // The stored state is on screen now: the run's own copy can go.
      liveRuns.release(run);
      void loadThreads();
    },
    [api, loadThreads, liveRuns],
  );

  // Opening a conversation: its stored state, then its running run (if any) rejoined.
  useEffect(() => {
    setError(undefined);
    setNotice(undefined);
    setEditing(undefined);
    setStored(emptyConversation());
    if (!threadId || liveRuns.get(threadId)) return;
    let current = true;
    (async () => {
      const state = await api.threadState(threadId);
      if (!current) return;
      const base = conversationFromState(state);
      setStored(base);
      const running = await api.runningRun(threadId);
      if (!current || !running || liveRuns.get(threadId)) return;
      await finished(await liveRuns.join(threadId, running.run_id, base));
    })().catch((caught: Error) => current && setError(caught.message));
    return () => {
      current = false;
    };
  }, [api, threadId, liveRuns, finished]);

  const followed = liveRuns.get(threadId);
  const conversation = followed?.conversation ?? stored;
  /** The thread waits for a person: a new message would be refused (AWAITING_APPROVAL). */
  const waiting = conversation.approvals.length > 0;
  /** The run going on in this conversation (an ended one waiting for release is not). */
  const live = followed?.ended ? undefined : followed;
  const thread = threads.find((candidate) => candidate.thread_id === threadId);

  // A thread keeps the agent it started with: show that one when it is opened.
  useEffect(() => {
    const threadAgent = thread?.metadata.assistant_id;
    if (typeof threadAgent === "string") setAgentId(threadAgent);
  }, [thread]);

  // Keep the newest message in view whenever the conversation changes.
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: "end" });
  }, [conversation]);

  /** The current thread, created when the conversation is new (titled by `title` if given). */
  const ensureThread = async (title?: string): Promise<string> => {
    if (threadId) return threadId;
    const created = await api.createThread(title ? { title: title.slice(0, TITLE_CHARS) } : {});
    location.hash = `#/chat/${encodeURIComponent(created.thread_id)}`;
    shownThread.current = created.thread_id;
    return created.thread_id;
  };

  const agentMissing =
    agents !== undefined && agentId !== undefined && !agents.some((a) => a.id === agentId);

  const send = async () => {
    const text = draft.trim();
    if (!text || sending || live || waiting) return;
    if (!agentId || agentMissing) {
      setError(
        agentMissing
          ? "This conversation's agent no longer exists (deleted, or no longer shared with you): choose another agent to go on."
          : "Choose an agent first (create one on the Agents page if there is none).",
      );
      return;
    }
    setError(undefined);
    setNotice(undefined);
    setSending(true);
    const before = conversation;
    setDraft("");
    // The agent reads uploads from its folder: the message says which files came with it.
    const files = attached;
    const content = files.length
      ? `${text}\n\n(Attached: ${files.map((path) => `\`${path}\``).join(", ")})`
      : text;
    setAttached([]);
    let target: string | undefined;
    try {
      target = await ensureThread(text);
      // A conversation started by an upload has no title yet: its first message names it.
      if (threadId && before.messages.length === 0 && typeof thread?.metadata.title !== "string") {
        await api.updateThread(target, { title: text.slice(0, TITLE_CHARS) });
      }
    } catch (caught) {
      setDraft(text);
      setAttached(files);
      setError((caught as Error).message);
      setSending(false);
      return;
    }
    setSending(false);
    const ending = liveRuns.start(target, withHumanMessage(before, content), {
      assistant_id: agentId,
      input: { messages: [{ type: "human", content }] },
      stream_mode: STREAM_MODES,
      stream_subgraphs: true,
    });
    // Listed (and marked running) at once, not when the run ends.
    void loadThreads();
    const end = await ending;
    if (!end.accepted) {
      // Refused (busy thread, bad input, server down): the message was not sent; give it back.
      if (shownThread.current === target) {
        setStored(before);
        setDraft((current) => current || text);
        setAttached((current) => (current.length ? current : files));
      }
    }
    await finished(end);
  };

  /** Uploads a file chosen in the message box into the conversation's uploads. */
  const attach = async (event: Event) => {
    const input = event.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setAttaching(true);
    setError(undefined);
    try {
      const target = await ensureThread();
      const entry = await api.uploadFile(target, file);
      setAttached((current) => [...current.filter((path) => path !== entry.path), entry.path]);
      setFilesVersion((version) => version + 1);
    } catch (caught) {
      setError(`Cannot attach "${file.name}": ${(caught as Error).message}`);
    } finally {
      setAttaching(false);
      input.value = "";
    }
  };

  /**
   * Sends `text` in place of the human message `messageId` (edit-and-resend; with its own text,
   * a regenerate): a run from the checkpoint just before it, which forks the thread there.
   */
  const resend = async (messageId: string, text: string) => {
    if (!threadId || !agentId || agentMissing || live) return;
    const index = conversation.messages.findIndex((message) => message.id === messageId);
    if (index === -1 || !text.trim()) return;
    setEditing(undefined);
    setError(undefined);
    setNotice(undefined);
    const prior = conversation.messages.slice(0, index);
    let checkpointId: string | undefined;
    try {
      const history = await api.threadHistory(threadId);
      checkpointId = checkpointBefore(
        history,
        prior.map((message) => message.id),
      );
    } catch (caught) {
      setError(`Cannot resend: ${(caught as Error).message}`);
      return;
    }
    if (!checkpointId) {
      setError(
        "Cannot resend this message: the thread's history no longer holds the point before it (it is older than the last 200 states).",
      );
      return;
    }
    const base = withHumanMessage({ ...conversation, messages: prior }, text.trim());
    await finished(
      await liveRuns.start(threadId, base, {
        assistant_id: agentId,
        input: { messages: [{ type: "human", content: text.trim() }] },
        checkpoint_id: checkpointId,
        stream_mode: STREAM_MODES,
        stream_subgraphs: true,
      }),
    );
  };

  /** Edit on every human message, Regenerate on the last answer, while nothing runs. */
  const renderActions = (message: ChatMessage, index: number) => {
    if (live || !threadId) return undefined;
    if (editing?.id === message.id) {
      return {
        replace: true,
        node: (
          <form
            class="edit-message"
            onSubmit={(event) => {
              event.preventDefault();
              void resend(message.id, editing.text);
            }}
          >
            <label for="edit-message">Edit message</label>
            <textarea
              id="edit-message"
              rows={3}
              value={editing.text}
              onInput={(event) =>
                setEditing({ id: message.id, text: (event.target as HTMLTextAreaElement).value })
              }
            />
            <div class="form-actions">
              <button type="submit" disabled={!editing.text.trim()}>
                Send edited
              </button>
              <button type="button" class="secondary" onClick={() => setEditing(undefined)}>
                Cancel edit
              </button>
            </div>
          </form>
        ),
      };
    }
    if (message.role === "human") {
      return {
        node: (
          <button
            type="button"
            class="link message-action"
            aria-label={`Edit message: ${message.text.slice(0, 40)}`}
            onClick={() => setEditing({ id: message.id, text: message.text })}
          >
            Edit
          </button>
        ),
      };
    }
    const last = conversation.messages.length - 1;
    if (message.role === "assistant" && index === last && message.toolCalls.length === 0) {
      const asked = conversation.messages
        .slice(0, index)
        .reverse()
        .find((candidate) => candidate.role === "human");
      if (!asked) return undefined;
      return {
        node: (
          <button
            type="button"
            class="link message-action"
            onClick={() => void resend(asked.id, asked.text)}
          >
            Regenerate
          </button>
        ),
      };
    }
    return undefined;
  };

  /**
   * Answers request `id` with a run that resumes the thread (`command.resume` naming that request
   * only: others stay pending) and follows it; resolves with the server's refusal, if any.
   */
  const answer = async (id: string, decisions: Decision[]): Promise<string | undefined> => {
    if (!threadId || !agentId || live) return "A run is going on: answer when it has ended.";
    setError(undefined);
    setNotice(undefined);
    const end = await liveRuns.start(threadId, withApprovalSent(conversation, id), {
      assistant_id: agentId,
      command: resumeCommand(id, decisions),
      stream_mode: STREAM_MODES,
      stream_subgraphs: true,
    });
    // A refusal (422: the decisions do not fit) is shown on its card, not on the page.
    await finished(end.accepted ? end : { ...end, error: undefined });
    return end.accepted ? undefined : (end.error as Error | undefined)?.message;
  };

  const cancel = async () => {
    if (!threadId) return;
    try {
      await liveRuns.cancel(threadId);
    } catch (caught) {
      setError(`Cannot cancel: ${(caught as Error).message}`);
    }
  };

  const startNew = () => {
    setStored(emptyConversation());
    setDraft("");
    setDrawerOpen(false);
    location.hash = "#/chat";
  };

  const rename = async (renamed: ThreadInfo, title: string) => {
    try {
      await api.updateThread(renamed.thread_id, { title: title.slice(0, 120) });
      await loadThreads();
    } catch (caught) {
      setError(`Cannot rename: ${(caught as Error).message}`);
    }
  };

  const remove = async (doomed: ThreadInfo) => {
    setDeleting(undefined);
    try {
      await api.deleteThread(doomed.thread_id);
      if (doomed.thread_id === threadId) startNew();
      await loadThreads();
    } catch (caught) {
      setError(`Cannot delete "${threadTitle(doomed)}": ${(caught as Error).message}`);
    }
  };

  const running = new Set([
    ...liveRuns.threadIds(),
    ...threads.filter((t) => t.status === "busy").map((t) => t.thread_id),
  ]);
  const names = new Map(allAgents.map((agent) => [agent.slug, agent.name]));
  const agentName = (id: unknown) => allAgents.find((agent) => agent.id === id)?.name ?? "";
  const chosenAgent = agents?.find((agent) => agent.id === agentId);
  const asker = (approval: PendingApproval) => {
    const slug = approval.value.subagent?.subagent_type;
    return slug ? (names.get(slug) ?? slug) : agentName(agentId) || "the agent";
  };
  const approvalOf = (card: Card) =>
    conversation.approvals.find((entry) => entry.value.subagent?.tool_call_id === card.id)?.id;
  return (
    <section class={`chat-layout${drawerOpen ? " drawer-open" : ""}`}>
      <button
        type="button"
        class="secondary drawer-toggle"
        aria-expanded={drawerOpen}
        aria-controls="conversations"
        onClick={() => setDrawerOpen((open) => !open)}
      >
        Conversations
      </button>
      <nav class="threads" id="conversations" aria-label="Conversations">
        <ThreadList
          threads={threads}
          currentId={threadId}
          running={running}
          agentName={agentName}
          onNew={startNew}
          onPick={() => setDrawerOpen(false)}
          onRename={rename}
          onDelete={setDeleting}
        />
      </nav>
      <div class="conversation">
        <h1 class="visually-hidden">{thread ? threadTitle(thread) : "New conversation"}</h1>
        <div class="field inline agent-picker">
          <label for="agent">Agent</label>
          <select
            id="agent"
            value={agentMissing ? "" : (agentId ?? "")}
            disabled={live !== undefined}
            onChange={(event) => setAgentId((event.target as HTMLSelectElement).value)}
          >
            {agents === undefined && <option value="">Loading…</option>}
            {agents?.length === 0 && <option value="">No chat agents</option>}
            {agentMissing && <option value="">(deleted agent: choose another)</option>}
            {agents?.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
          {chosenAgent?.description && (
            <span class="muted agent-description">{chosenAgent.description}</span>
          )}
          {threadId && conversation.messages.length > 0 && (
            <button
              type="button"
              class="secondary branches-button"
              disabled={live !== undefined}
              onClick={() => setShowBranches(true)}
            >
              Branches
            </button>
          )}
        </div>
        <div class="transcript" aria-live="polite">
          {conversation.messages.length === 0 ? (
            <p class="hint">Ask something; subagents this agent calls show up as cards.</p>
          ) : (
            <MessageList
              messages={conversation.messages}
              renderActions={renderActions}
              renderTaskCall={(callId) => {
                const card = conversation.cards[callId];
                return card ? (
                  <SubagentCard
                    key={callId}
                    card={card}
                    name={names.get(card.subagentType)}
                    connectionLost={live?.connection === "lost"}
                    onOpenThread={setOpenCard}
                    approvalId={approvalOf(card)}
                    onShowApproval={showApproval}
                  />
                ) : null;
              }}
            />
          )}
          <ApprovalList
            key={threadId}
            approvals={conversation.approvals}
            who={asker}
            busy={live !== undefined}
            onAnswer={answer}
          />
          {live &&
            (live.connection === "lost" ? (
              <p class="notice" role="status">
                Connection lost: retrying…
              </p>
            ) : (
              <p class="working" aria-busy="true">
                Working…
              </p>
            ))}
          <div ref={bottom} />
        </div>
        <AsyncTasksPanel
          key={threadId}
          api={api}
          threadId={threadId}
          messages={conversation.messages}
          names={names}
        />
        {notice && (
          <p role="status" class="notice">
            {notice}
          </p>
        )}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {waiting && !live && (
          <p class="notice" role="status">
            Waiting for your approval: answer the request above to go on.
          </p>
        )}
        <form
          class="composer"
          onSubmit={(event) => {
            event.preventDefault();
            void send();
          }}
        >
          <label for="message">Message</label>
          <textarea
            id="message"
            rows={3}
            value={draft}
            placeholder="Enter sends, Shift+Enter for a new line"
            onInput={(event) => setDraft((event.target as HTMLTextAreaElement).value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
                event.preventDefault();
                void send();
              }
            }}
          />
          {attached.length > 0 && (
            <p class="attached muted" data-attached="">
              Attached: {attached.map((path) => baseName(path)).join(", ")}
            </p>
          )}
          <div class="form-actions">
            <label class="attach secondary" for="attach">
              {attaching ? "Attaching…" : "Attach file"}
            </label>
            <input
              id="attach"
              class="attach-input"
              type="file"
              disabled={attaching}
              onChange={(event) => void attach(event)}
            />
            <button
              type="submit"
              disabled={sending || live !== undefined || waiting || !draft.trim()}
            >
              Send
            </button>
            {live && (
              <button
                type="button"
                class="danger"
                disabled={!live.runId || live.cancelRequested}
                onClick={() => void cancel()}
              >
                Cancel
              </button>
            )}
          </div>
        </form>
      </div>
      <FilesPanel
        api={api}
        threadId={threadId}
        ensureThread={() => ensureThread()}
        refreshKey={filesVersion}
      />
      {openCard && threadId && (
        <ChildThreadDialog
          api={api}
          threadId={threadId}
          card={conversation.cards[openCard.id] ?? openCard}
          name={names.get(openCard.subagentType)}
          onClose={() => setOpenCard(undefined)}
        />
      )}
      {showBranches && threadId && (
        <BranchesDialog api={api} threadId={threadId} onClose={() => setShowBranches(false)} />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this conversation?"
          confirmLabel="Delete"
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        >
          <p>
            "{threadTitle(deleting)}" will be deleted with its messages, its subagents' threads and
            its files. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
