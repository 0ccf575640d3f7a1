import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import {
  type AsyncTask,
  orderTasks,
  taskCard,
  tasksSummary,
  taskToolCallsKey,
} from "../async-tasks.js";
import type { ChatMessage } from "../chat-state.js";
import { AsyncTaskRow } from "./async-task-row.js";
import { ChildThreadDialog } from "./child-thread-dialog.js";
import { useAsyncTasks } from "./use-async-tasks.js";

/**
 * The background tasks of the thread on screen (README "Background subagents"): each task's
 * subagent, status, task and answer's start, its full answer on demand, Cancel while it is
 * active, its request for approval while it waits, and its own thread. Shown only when the
 * thread has tasks; render it keyed by the thread. `messages` are the conversation's: a new
 * answered `start_async_task` (or update, cancel) call lists the tasks again.
 */
export function AsyncTasksPanel(props: {
  api: Api;
  threadId: string | undefined;
  messages: readonly ChatMessage[];
  /** Subagents' names by slug (a slug the user cannot see is shown as is). */
  names: ReadonlyMap<string, string>;
}) {
  const { api, threadId } = props;
  const { tasks, error, replace } = useAsyncTasks(api, threadId, taskToolCallsKey(props.messages));
  const [collapsed, setCollapsed] = useState(false);
  const [opened, setOpened] = useState<string | undefined>();
  if (!threadId || !tasks || tasks.length === 0) return null;
  const nameOf = (task: AsyncTask) => props.names.get(task.subagent_type) ?? task.subagent_type;
  const openedTask = tasks.find((task) => task.id === opened);
  return (
    <section class="async-tasks" aria-labelledby="async-tasks-heading" data-async-tasks="">
      <header>
        <h2 id="async-tasks-heading">Background tasks</h2>
        <span class="muted" data-async-tasks-summary="">
          {tasksSummary(tasks)}
        </span>
        <button
          type="button"
          class="link"
          aria-expanded={!collapsed}
          aria-controls="async-task-list"
          onClick={() => setCollapsed((value) => !value)}
        >
          {collapsed ? "Show" : "Hide"}
        </button>
      </header>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="async-task-list" id="async-task-list" hidden={collapsed}>
        {orderTasks(tasks).map((task) => (
          <AsyncTaskRow
            key={task.id}
            api={api}
            threadId={threadId}
            task={task}
            name={nameOf(task)}
            onChanged={replace}
            onOpenThread={() => setOpened(task.id)}
          />
        ))}
      </div>
      {openedTask && (
        <ChildThreadDialog
          api={api}
          threadId={threadId}
          card={taskCard(openedTask)}
          name={nameOf(openedTask)}
          onClose={() => setOpened(undefined)}
        />
      )}
    </section>
  );
}
