import { useState } from "preact/hooks";
import type { ThreadInfo } from "../api.js";
import { threadTitle } from "../text.js";

/**
 * The conversations: a search over their titles, each one's agent and time, a mark on those that
 * run and on those waiting for approval (the server's `interrupted`), and rename and delete. On phones it is a drawer the chat page opens and closes.
 */
export function ThreadList(props: {
  threads: ThreadInfo[];
  currentId: string | undefined;
  /** Threads with a run going (followed by the page, or busy on the server). */
  running: ReadonlySet<string>;
  agentName: (agentId: unknown) => string;
  onNew: () => void;
  onPick: () => void;
  onRename: (thread: ThreadInfo, title: string) => Promise<void>;
  onDelete: (thread: ThreadInfo) => void;
}) {
  const [query, setQuery] = useState("");
  const [renaming, setRenaming] = useState<string | undefined>();
  const [title, setTitle] = useState("");
  const needle = query.trim().toLowerCase();
  const shown = needle
    ? props.threads.filter((thread) => threadTitle(thread).toLowerCase().includes(needle))
    : props.threads;

  return (
    <>
      <button type="button" onClick={props.onNew}>
        New conversation
      </button>
      <div class="field thread-search">
        <label for="thread-search">Search conversations</label>
        <input
          id="thread-search"
          type="search"
          value={query}
          onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
        />
      </div>
      {shown.length === 0 && (
        <p class="hint">{needle ? "No conversation matches." : "No conversations yet."}</p>
      )}
      <ul class="thread-list">
        {shown.map((thread) => {
          const name = threadTitle(thread);
          const running = props.running.has(thread.thread_id);
          const waiting = !running && thread.status === "interrupted";
          return (
            <li
              key={thread.thread_id}
              data-thread-id={thread.thread_id}
              data-running={running ? "true" : undefined}
              data-waiting={waiting ? "true" : undefined}
            >
              {renaming === thread.thread_id ? (
                <form
                  class="rename"
                  onSubmit={(event) => {
                    event.preventDefault();
                    void props.onRename(thread, title.trim()).then(() => setRenaming(undefined));
                  }}
                >
                  <label class="visually-hidden" for={`rename-${thread.thread_id}`}>
                    New title
                  </label>
                  <input
                    id={`rename-${thread.thread_id}`}
                    value={title}
                    maxLength={120}
                    required
                    onInput={(event) => setTitle((event.target as HTMLInputElement).value)}
                  />
                  <div class="form-actions">
                    <button type="submit">Save</button>
                    <button type="button" class="secondary" onClick={() => setRenaming(undefined)}>
                      Cancel
                    </button>
                  </div>
                </form>
              ) : (
                <>
                  <a
                    class="thread-link"
                    href={`#/chat/${encodeURIComponent(thread.thread_id)}`}
                    aria-current={thread.thread_id === props.currentId ? "page" : undefined}
                    title={name}
                    onClick={props.onPick}
                  >
                    {running && (
                      <span class="running-dot" role="img" aria-label="running" title="running" />
                    )}
                    {waiting && (
                      <span
                        class="waiting-dot"
                        role="img"
                        aria-label="waiting for approval"
                        title="waiting for approval"
                      />
                    )}
                    {name}
                  </a>
                  <div class="thread-meta muted">
                    <span>
                      {props.agentName(thread.metadata?.assistant_id)}{" "}
                      {new Date(thread.updated_at).toLocaleString()}
                    </span>
                    <span class="thread-actions">
                      <button
                        type="button"
                        class="link"
                        aria-label={`Rename ${name}`}
                        onClick={() => {
                          setTitle(name);
                          setRenaming(thread.thread_id);
                        }}
                      >
                        Rename
                      </button>
                      <button
                        type="button"
                        class="link danger-link"
                        aria-label={`Delete ${name}`}
                        disabled={running}
                        onClick={() => props.onDelete(thread)}
                      >
                        Delete
                      </button>
                    </span>
                  </div>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}
