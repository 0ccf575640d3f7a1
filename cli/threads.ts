import type { Runtime } from "../runtime.js";
import type { StoreOptions } from "./args.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

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
