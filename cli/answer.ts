import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { RunResult } from "../runs/events.js";
import type { RunRequest } from "../runtime.js";
import type { CliContext } from "./context.js";
import { ProgressRenderer } from "./progress.js";

/** How one question ended. */
export type AnswerOutcome =
  | { kind: "answered"; result: RunResult }
  /** Ctrl-C cancelled the run; `threadId` is the thread it ran on, once it was known. */
  | { kind: "cancelled"; threadId: string | undefined }
  /** Ctrl-C asked to quit while the run was still winding down. */
  | { kind: "quit" };

/** How often the status line of running subagents is redrawn on a terminal. */
const TICK_MS = 1000;

/**
 * Runs one question, rendering its progress and answer on stdout, with Ctrl-C wired to cancel.
 *
 * @throws whatever the run throws, except the abort error of a cancelled run.
 */
export async function streamAnswer(
  context: CliContext,
  request: Omit<RunRequest, "signal">,
  /** Child threads a resume takes up again (`ProgressOptions.resuming`). */
  resuming?: Iterable<string>,
): Promise<AnswerOutcome> {
  const { runtime, io, interrupts } = context;
  const live = io.stdout.isTTY === true;
  let stopped = false;
  const progress = new ProgressRenderer({
    // Once the caller has moved on (quit), late events of the dying run must not print.
    write: (text) => {
      if (!stopped) io.stdout.write(text);
    },
    live,
    columns: io.stdout.columns,
    ...(resuming ? { resuming } : {}),
  });
  // A background task that ends meanwhile is told between the main agent's sentences.
  context.background?.attach("turn", (line) => !stopped && progress.notice(line));
  const signal = interrupts.beginRun();
  const timer = live ? setInterval(() => progress.tick(), TICK_MS) : undefined;
  let threadId = request.threadId;

  const consume = async (): Promise<AnswerOutcome> => {
    try {
      for await (const event of runtime.stream({ ...request, signal })) {
        if (event.type === "run_started") {
          threadId = event.threadId;
          context.background?.follow(threadId);
        }
        progress.handle(event);
        if (event.type === "run_finished") return { kind: "answered", result: event.result };
      }
    } catch (error) {
      // An aborted run rejects with whatever error the abort surfaced as; the signal says why.
      if (signal.aborted) return { kind: "cancelled", threadId };
      throw error;
    }
    // The runtime's stream ends with run_finished or throws: anything else is our bug.
    throw new SubagentGraphError(
      ErrorCode.Internal,
      "the run's event stream ended without a run_finished event",
    );
  };

  try {
    return await Promise.race([
      consume(),
      interrupts.quit.then((): AnswerOutcome => ({ kind: "quit" })),
    ]);
  } finally {
    clearInterval(timer);
    context.background?.attach("turn", undefined);
    interrupts.endRun();
    progress.end();
    stopped = true;
  }
}
