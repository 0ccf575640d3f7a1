import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { AgentRecord } from "../agent-form-model.js";
import { type Api, ApiError, type ThreadInfo } from "../api.js";
import {
  applyStreamEvent,
  type SubagentCard as Card,
  type Conversation,
  conversationFromValues,
  emptyConversation,
  withHumanMessage,
} from "../chat-state.js";
import { ChildThreadDialog } from "../components/child-thread-dialog.js";
import { FilesPanel } from "../components/files-panel.js";
import { MessageList } from "../components/message-list.js";
import { SubagentCard } from "../components/subagent-card.js";

/** What a run streams: the state, node updates, tokens, and the task tool's events. */
const STREAM_MODES = ["values", "updates", "messages-tuple", "custom"];

/** A run the page is streaming. */
interface StreamingRun {
  threadId: string;
  conversation: Conversation;
  cancelRequested: boolean;
}

/** Longest conversation title kept in a thread's metadata. */
const TITLE_CHARS = 60;

/**
 * Chat with a chat agent (subagents are not offered: they are called by agents, not people).
 * A run streams its answer, and each `task` call shows a live card; the run can be cancelled.
 */
export function ChatPage(props: { api: Api; threadId: string | undefined }) {
  const { api, threadId } = props;
  const [agents, setAgents] = useState<AgentRecord[] | undefined>();
  const [agentId, setAgentId] = useState<string | undefined>();
  const [threads, setThreads] = useState<ThreadInfo[]>([]);
  const [conversation, setConversation] = useState<Conversation>(emptyConversation);
  const [draft, setDraft] = useState("");
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [openCard, setOpenCard] = useState<Card | undefined>();
  const [filesVersion, setFilesVersion] = useState(0);
  /**
   * The run this page streams, if any: its thread (whose stored state must not be reloaded over
   * the stream), its conversation so far (shown again when the user comes back to that thread)
   * and whether Cancel was pressed.
   */
  const streaming = useRef<StreamingRun | undefined>(undefined);
  /** The thread on screen, for a stream to know whether to draw. */
  const shownThread = useRef(threadId);
  shownThread.current = threadId;
  const bottom = useRef<HTMLDivElement>(null);

  const loadThreads = useCallback(async () => {
    try {
      setThreads(await api.searchThreads(30));
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, [api]);

  useEffect(() => {
    api.listAgents(false).then(
      (chatAgents) => {
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

  useEffect(() => {
    setError(undefined);
    setNotice(undefined);
    if (!threadId) {
      setConversation(emptyConversation());
      return;
    }
    const run = streaming.current;
    if (run?.threadId === threadId) {
      setConversation(run.conversation);
      return;
    }
    let current = true;
    api.threadState(threadId).then(
      (state) => current && setConversation(conversationFromValues(state.values)),
      (caught: Error) => current && setError(caught.message),
    );
    return () => {
      current = false;
    };
  }, [api, threadId]);

  // A thread keeps the agent it started with: show that one when it is opened.
  useEffect(() => {
    const thread = threads.find((candidate) => candidate.thread_id === threadId);
    const threadAgent = thread?.metadata.assistant_id;
    if (typeof threadAgent === "string") setAgentId(threadAgent);
  }, [threadId, threads]);

  // Keep the newest message in view whenever the conversation changes.
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: "end" });
  }, [conversation]);

  /** The current thread, created (titled by `title`) when the conversation is new. */
  const ensureThread = async (title = "Files"): Promise<string> => {
    if (threadId) return threadId;
    const created = await api.createThread({ title: title.slice(0, TITLE_CHARS) });
    location.hash = `#/chat/${encodeURIComponent(created.thread_id)}`;
    return created.thread_id;
  };

  const send = async () => {
    const text = draft.trim();
    if (!text || running) return;
    if (!agentId) {
      setError("Choose an agent first (create one on the Agents page if there is none).");
      return;
    }
    setError(undefined);
    setNotice(undefined);
    setRunning(true);
    const started = withHumanMessage(conversation, text);
    setConversation(started);
    setDraft("");
    let run: StreamingRun | undefined;
    /** Whether the server took the run (its first event came): else the message goes back. */
    let accepted = false;
    // Only the thread on screen is drawn; a run of another one goes on in the background.
    const show = (update: Conversation) => {
      if (run) run.conversation = update;
      if (shownThread.current === run?.threadId) setConversation(update);
    };
    try {
      const target = await ensureThread(text);
      run = { threadId: target, conversation: started, cancelRequested: false };
      streaming.current = run;
      const events = api.streamRun(target, {
        assistant_id: agentId,
        input: { messages: [{ type: "human", content: text }] },
        stream_mode: STREAM_MODES,
        stream_subgraphs: true,
      });
      for await (const event of events) {
        accepted = true;
        show(applyStreamEvent(run.conversation, event.event, event.data));
      }
      // A cancelled run's stream just ends (no error event): say what happened.
      if (run.cancelRequested) setNotice("The run was cancelled.");
      else if (run.conversation.error) setError(run.conversation.error);
    } catch (caught) {
      // A refused run (busy thread, bad input, server down) keeps the user's text to send again.
      if (!accepted) setDraft(text);
      setError(
        caught instanceof ApiError && caught.status === 409
          ? `${caught.message} (wait for the running answer, or cancel it)`
          : (caught as Error).message,
      );
    } finally {
      streaming.current = undefined;
      setRunning(false);
      if (run) {
        // The stored state is the truth after a run: a cancelled one was repaired there.
        try {
          const state = await api.threadState(run.threadId);
          show({ ...conversationFromValues(state.values, run.conversation), error: undefined });
        } catch {
          // Keep what was streamed; the error (if any) is already shown.
        }
        setFilesVersion((version) => version + 1);
        void loadThreads();
      }
    }
  };

  const cancel = async () => {
    const run = streaming.current;
    const runId = run?.conversation.runId;
    if (!run || !runId) return;
    run.cancelRequested = true;
    try {
      await api.cancelRun(run.threadId, runId);
    } catch (caught) {
      setError(`Cannot cancel: ${(caught as Error).message}`);
    }
  };

  const startNew = () => {
    setConversation(emptyConversation());
    setDraft("");
    location.hash = "#/chat";
  };

  const chosenAgent = agents?.find((agent) => agent.id === agentId);
  return (
    <section class="chat-layout">
      <nav class="threads" aria-label="Conversations">
        <button type="button" onClick={startNew}>
          New conversation
        </button>
        <ul>
          {threads.map((thread) => (
            <li key={thread.thread_id}>
              <a
                href={`#/chat/${encodeURIComponent(thread.thread_id)}`}
                aria-current={thread.thread_id === threadId ? "page" : undefined}
              >
                {typeof thread.metadata.title === "string"
                  ? thread.metadata.title
                  : new Date(thread.created_at).toLocaleString()}
              </a>
              <div class="muted">
                {agents?.find((agent) => agent.id === thread.metadata.assistant_id)?.name ?? ""}{" "}
                {new Date(thread.updated_at).toLocaleString()}
              </div>
            </li>
          ))}
        </ul>
      </nav>
      <div class="conversation">
        <div class="field inline">
          <label for="agent">Agent</label>
          <select
            id="agent"
            value={agentId ?? ""}
            disabled={running}
            onChange={(event) => setAgentId((event.target as HTMLSelectElement).value)}
          >
            {agents === undefined && <option value="">Loading…</option>}
            {agents?.length === 0 && <option value="">No chat agents</option>}
            {agents?.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
          {chosenAgent?.description && <span class="muted">{chosenAgent.description}</span>}
        </div>
        <div class="transcript" aria-live="polite">
          {conversation.messages.length === 0 ? (
            <p class="hint">Ask something; subagents this agent calls show up as cards.</p>
          ) : (
            <MessageList
              messages={conversation.messages}
              renderTaskCall={(callId) => {
                const card = conversation.cards[callId];
                return card ? (
                  <SubagentCard key={callId} card={card} onOpenThread={setOpenCard} />
                ) : null;
              }}
            />
          )}
          {running &&
            (streaming.current?.threadId === threadId || !threadId ? (
              <p class="working" aria-busy="true">
                Working…
              </p>
            ) : (
              <p class="hint">An answer is still being written in another conversation.</p>
            ))}
          <div ref={bottom} />
        </div>
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
          <div class="form-actions">
            <button type="submit" disabled={running || !draft.trim()}>
              Send
            </button>
            {running && (
              <button
                type="button"
                class="danger"
                disabled={!streaming.current?.conversation.runId}
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
          card={openCard}
          onClose={() => setOpenCard(undefined)}
        />
      )}
    </section>
  );
}
