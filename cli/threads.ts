import type { PendingApproval } from "../middleware/approval-request.js";
import type { Runtime } from "../runtime.js";
import { argumentsLine } from "./approval-view.js";
import { backgroundTasksSection } from "./async-task-lines.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type Io, say } from "./context.js";
import { cliCommand } from "./session.js";
import { columns, plural } from "./text.js";

/** How many threads `threads list` shows, most recently used first. */
export const THREADS_LISTED = 50;

/** `threads list`: the user's threads, most recently used first, with their agent. */
export async function listThreads(runtime: Runtime, io: Io, store: StoreOptions): Promise<number> {
  // One more than shown, to tell whether there are more.
  const threads = await runtime.threads.search(store.uid, { limit: THREADS_LISTED + 1 });
  if (threads.length === 0) {
    say(io, `user "${store.uid}" has no threads yet: "subagent-graph chat" starts one.`);
    return 0;
  }
  const agents = await runtime.agents.list(store.uid);
  const slugOf = (agentId: string | undefined) =>
    agentId === undefined
      ? "-"
      : (agents.find((agent) => agent.id === agentId)?.slug ?? "(agent deleted)");
  const shown = threads.slice(0, THREADS_LISTED);
  say(
    io,
    columns([
      ["THREAD", "AGENT", "LAST USED", "CREATED"],
      ...shown.map((thread) => [
        thread.threadId,
        slugOf(thread.agentId),
        thread.updatedAt,
        thread.createdAt,
      ]),
    ]),
  );
  if (threads.length > THREADS_LISTED) {
    say(io, `(the ${THREADS_LISTED} most recently used; older threads are not shown)`);
  }
  return 0;
}

/**
 * `threads show <id>`: one thread of the user's, its agent and last use, and the requests for
 * approval it waits on: one row per tool call (the interrupt id that answers it, who asks — the
 * main agent or a subagent —, the tool, its arguments on one line), then how to answer them;
 * then its background tasks, if it has any (cli/async-task-lines.ts).
 *
 * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) unless the thread is the user's.
 */
export async function showThread(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  threadId: string,
): Promise<number> {
  const thread = await runtime.threads.get(store.uid, threadId);
  const pending = await runtime.threads.interrupts(store.uid, threadId);
  const agents = await runtime.agents.list(store.uid);
  const agent =
    thread.agentId === undefined
      ? undefined
      : (agents.find((candidate) => candidate.id === thread.agentId)?.slug ?? "(agent deleted)");
  say(io, `thread:     ${thread.threadId}`);
  say(io, `agent:      ${agent ?? "- (no run yet)"}`);
  say(io, `created:    ${thread.createdAt}`);
  say(io, `last used:  ${thread.updatedAt}`);
  const background = backgroundTasksSection(await runtime.asyncTasks.list(store.uid, threadId));
  if (pending.length === 0) {
    say(io, `status:     ${thread.busy ? "running" : "idle"}, not waiting for approval`);
  } else {
    sayPending(io, store, threadId, agent, pending);
  }
  if (background.length > 0) say(io, ["", ...background].join("\n"));
  return 0;
}

/** The requests for approval a thread waits on, and the command that answers them. */
function sayPending(
  io: Io,
  store: StoreOptions,
  threadId: string,
  agent: string | undefined,
  pending: readonly PendingApproval[],
): void {
  say(io, `status:     waiting for approval (${plural(pending.length, "request")})`);
  say(io, "");
  say(
    io,
    columns([
      ["ID", "ASKED BY", "TOOL", "ARGUMENTS"],
      ...pending.flatMap((entry) =>
        entry.value.actionRequests.map((action) => [
          entry.id,
          entry.value.subagent
            ? `${entry.value.subagent.subagent_type} (subagent)`
            : `${agent ?? "main agent"} (main)`,
          action.name,
          argumentsLine(action.args),
        ]),
      ),
    ]),
  );
  const tasks = pending.flatMap((entry) => {
    const { subagent } = entry.value;
    return subagent
      ? [`${entry.id}: subagent ${subagent.subagent_type}, task "${subagent.description}"`]
      : [];
  });
  if (tasks.length > 0) say(io, ["", ...tasks].join("\n"));
  say(io, "");
  say(io, `answer: ${cliCommand(store, `chat --thread ${threadId}`)}`);
}
