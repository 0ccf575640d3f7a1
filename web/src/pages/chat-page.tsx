import { useEffect, useRef, useState } from "preact/hooks";
import type { Api, ThreadInfo } from "../api.js";
import type { SubagentCard as Card } from "../chat-state.js";
import { ApprovalList, showApproval } from "../components/approval-list.js";
import { AsyncTasksPanel } from "../components/async-tasks-panel.js";
import { BranchesDialog } from "../components/branches-dialog.js";
import { ChatComposer } from "../components/chat-composer.js";
import { ChatHeader } from "../components/chat-header.js";
import { ChildThreadDialog } from "../components/child-thread-dialog.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { FilesPanel } from "../components/files-panel.js";
import { messageActions } from "../components/message-actions.js";
import { MessageList } from "../components/message-list.js";
import { SubagentCard } from "../components/subagent-card.js";
import { ThreadList } from "../components/thread-list.js";
import { useChat } from "../components/use-chat.js";
import { threadTitle } from "../text.js";

/**
 * Chat with a chat agent (subagents are not offered: they are called by agents, not people).
 * A run streams its answer, and each `task` call shows a live card; the run can be cancelled.
 * The conversation, its runs and what they do live in a `ChatStore` (`chat-store.ts`): this page
 * draws it, and keeps only which dialog is open.
 */
export function ChatPage(props: { api: Api; threadId: string | undefined }) {
  const { api, threadId } = props;
  const chat = useChat(api, threadId);
  const { state } = chat;
  const [openCard, setOpenCard] = useState<Card | undefined>();
  const [deleting, setDeleting] = useState<ThreadInfo | undefined>();
  const [showBranches, setShowBranches] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);
  const conversation = chat.conversation;
  const { live, waiting, thread, names } = chat;

  // Keep the newest message in view whenever the conversation changes.
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: "end" });
  }, [conversation]);

  return (
    <section class={`chat-layout${state.drawerOpen ? " drawer-open" : ""}`}>
      <button
        type="button"
        class="secondary drawer-toggle"
        aria-expanded={state.drawerOpen}
        aria-controls="conversations"
        onClick={() => chat.setDrawerOpen(!state.drawerOpen)}
      >
        Conversations
      </button>
      <nav class="threads" id="conversations" aria-label="Conversations">
        <ThreadList
          threads={state.threads}
          currentId={threadId}
          running={chat.running}
          agentName={(id) => chat.agentName(id)}
          onNew={() => chat.startNew()}
          onPick={() => chat.setDrawerOpen(false)}
          onRename={(renamed, title) => chat.rename(renamed, title)}
          onDelete={setDeleting}
        />
      </nav>
      <div class="conversation">
        <h1 class="visually-hidden">{thread ? threadTitle(thread) : "New conversation"}</h1>
        <ChatHeader
          agents={state.agents}
          agentId={state.agentId}
          agentMissing={chat.agentMissing}
          busy={live !== undefined}
          branches={threadId !== undefined && conversation.messages.length > 0}
          onChoose={(agentId) => chat.chooseAgent(agentId)}
          onBranches={() => setShowBranches(true)}
        />
        <div class="transcript" aria-live="polite">
          {conversation.messages.length === 0 ? (
            <p class="hint">Ask something; subagents this agent calls show up as cards.</p>
          ) : (
            <MessageList
              messages={conversation.messages}
              renderActions={
                live || !threadId
                  ? undefined
                  : messageActions({
                      messages: conversation.messages,
                      editing: state.editing,
                      onEdit: (editing) => chat.edit(editing),
                      onResend: (id, text) => void chat.resend(id, text),
                    })
              }
              renderTaskCall={(callId) => {
                const card = conversation.cards[callId];
                return card ? (
                  <SubagentCard
                    key={callId}
                    card={card}
                    name={names.get(card.subagentType)}
                    connectionLost={live?.connection === "lost"}
                    onOpenThread={setOpenCard}
                    approvalId={chat.approvalOf(card)}
                    onShowApproval={showApproval}
                  />
                ) : null;
              }}
            />
          )}
          <ApprovalList
            key={threadId}
            approvals={conversation.approvals}
            who={(approval) => chat.asker(approval)}
            busy={live !== undefined}
            onAnswer={(id, decisions) => chat.answer(id, decisions)}
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
        {state.notice && (
          <p role="status" class="notice">
            {state.notice}
          </p>
        )}
        {state.error && (
          <p role="alert" class="error">
            {state.error}
          </p>
        )}
        {waiting && !live && (
          <p class="notice" role="status">
            Waiting for your approval: answer the request above to go on.
          </p>
        )}
        <ChatComposer
          draft={state.draft}
          attached={state.attached}
          attaching={state.attaching}
          blocked={state.sending || live !== undefined || waiting}
          live={live}
          onDraft={(draft) => chat.setDraft(draft)}
          onSend={() => void chat.send()}
          onAttach={(file) => chat.attach(file)}
          onCancel={() => void chat.cancel()}
        />
      </div>
      <FilesPanel
        api={api}
        threadId={threadId}
        ensureThread={() => chat.ensureThread()}
        refreshKey={state.filesVersion}
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
          onConfirm={() => {
            setDeleting(undefined);
            void chat.remove(deleting);
          }}
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
