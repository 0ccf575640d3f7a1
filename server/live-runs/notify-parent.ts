/**
 * The server's side of `notify_parent` (README "Background subagents"): when a background task
 * ends, the run on its parent thread is started through the run service, so the server's
 * clients see it like any run (its events, joins, the thread busy meanwhile). On a fleet it is
 * queued behind whatever the thread runs (`multitask_strategy: "enqueue"`): a busy thread is
 * never run twice at once. One process (SQLite) tries again while the thread is busy.
 */

import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import { noticeId, noticeText } from "../../middleware/async-task-text.js";
import type { ParentNotifier } from "../../runs/async-tasks/service.js";
import type { Runtime } from "../../runtime.js";
import type { RunService } from "./run-service.js";

/** How long a notify run waits for a busy parent thread (one process), in ms. */
const PATIENCE_MS = 5 * 60_000;

/** A notifier that starts parent runs through `service`. */
export function serviceNotifier(
  runtime: Runtime,
  service: RunService,
  warn: (message: string) => void,
): ParentNotifier {
  return async (uid, threadId, task) => {
    const deadline = Date.now() + PATIENCE_MS;
    for (;;) {
      try {
        const agent = (await runtime.threads.get(uid, threadId)).agentId;
        if (!agent) return;
        await service.start(
          uid,
          { id: threadId, external: threadId, exists: true },
          {
            assistant_id: agent,
            input: { messages: [{ role: "user", content: noticeText(task), id: noticeId(task) }] },
            metadata: { async_task_id: task.id },
            on_disconnect: "continue",
            ...(runtime.fleet ? { multitask_strategy: "enqueue" as const } : {}),
          },
          ["values"],
        );
        return;
      } catch (error) {
        const code = SubagentGraphError.isInstance(error) ? error.code : undefined;
        // Waiting for an approval, or deleted: its next model call (if any) is told instead.
        if (code === ErrorCode.AwaitingApproval || code === ErrorCode.NotFound) return;
        if (code !== ErrorCode.ThreadBusy || Date.now() > deadline) {
          warn(
            `background task ${task.id}: could not start a run on thread "${threadId}" to tell it (${messageOf(error)})`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
}
