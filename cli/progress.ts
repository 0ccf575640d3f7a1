import type { SubagentRun } from "../middleware/subagent-runs.js";
import type { RunEvent } from "../runs/events.js";
import { formatDuration, oneLine, plural } from "./text.js";

/** Options of {@link ProgressRenderer}. */
export interface ProgressOptions {
  /** Where the output goes (stdout in the CLI). */
  write: (text: string) => void;
  /** Clock in milliseconds, for the elapsed time of running subagents. Default `Date.now`. */
  now?: () => number;
  /**
   * Whether {@link ProgressRenderer.tick} may draw a transient status line, erased and redrawn
   * with terminal escapes: only for a terminal. Default false (start and finish lines only).
   */
  live?: boolean;
  /** Terminal width: the status line is cut to fit, because a wrapped line cannot be erased. */
  columns?: number;
  /**
   * Child threads that were waiting for approval when this run (a resume) began: their start
   * event is shown as a resume.
   */
  resuming?: Iterable<string>;
}

/** A subagent between its start and finish events. */
interface RunningSubagent {
  slug: string;
  startedAt: number;
  tokens: number;
  /** Paused on a gated tool call until a person decides (`subagent_waiting`). */
  waiting: boolean;
}

/** Carriage return + "erase line": puts the cursor at column 0 of an empty line. */
const ERASE_LINE = "\r\x1b[2K";
const PREVIEW_CHARS = 100;

/**
 * Renders the events of one run for a terminal or a log: the main agent's text as it streams,
 * one line per subagent start and finish, and (in live mode) a status line of the subagents
 * still running, redrawn on each {@link tick}.
 *
 * Subagents' tokens are only counted: several children stream at once, and their full text
 * interleaved would be unreadable; the main agent's synthesis is what the user reads.
 *
 * It does no I/O and reads no clock of its own, so a test drives it with a fake sink and clock.
 *
 * @example
 * const progress = new ProgressRenderer({ write: (t) => process.stdout.write(t), live: true });
 * const timer = setInterval(() => progress.tick(), 1000);
 * for await (const event of runtime.stream(request)) progress.handle(event);
 * clearInterval(timer);
 * progress.end();
 */
export class ProgressRenderer {
  readonly #write: (text: string) => void;
  readonly #now: () => number;
  readonly #live: boolean;
  readonly #columns: number | undefined;
  readonly #resuming: ReadonlySet<string>;
  /** Keyed by child thread id: token events name the child by its thread, not by call id. */
  readonly #running = new Map<string, RunningSubagent>();
  /** Tool call ids of task calls that reported a start or finish. */
  readonly #subagentCalls = new Set<string>();
  #atLineStart = true;
  #statusShown = false;
  /** Main-agent tokens since its last complete message: a model that does not stream sends none. */
  #mainStreamed = false;
  #mainWrote = false;

  constructor(options: ProgressOptions) {
    this.#write = options.write;
    this.#now = options.now ?? Date.now;
    this.#live = options.live ?? false;
    this.#columns = options.columns;
    this.#resuming = new Set(options.resuming ?? []);
  }

  /** How many subagents have started and not finished. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** Renders one event. */
  handle(event: RunEvent): void {
    switch (event.type) {
      case "token":
        if (event.childThreadId === undefined) this.#mainText(event.text);
        else this.#countChildToken(event.childThreadId);
        return;
      case "assistant_message":
        if (event.childThreadId === undefined) this.#mainMessage(event.text);
        return;
      case "tool_result":
        // A task call answered before the task tool ran (arguments that do not fit its schema)
        // sends no subagent events; without this line the user would never see why nothing ran.
        if (event.childThreadId === undefined && event.isError) {
          if (!this.#subagentCalls.has(event.toolCallId)) {
            this.#line(`✗ ${event.name ?? "tool"} error: ${oneLine(event.text, PREVIEW_CHARS)}`);
          }
        }
        return;
      case "subagent_started":
        this.#subagentCalls.add(event.id);
        // No child thread: the call ended before its child ran (refused, or the subagent could
        // not start), and its finish event, next, says why.
        if (!event.child_thread_id) return;
        this.#running.set(event.child_thread_id, {
          slug: event.subagent_type,
          startedAt: this.#now(),
          tokens: 0,
          waiting: false,
        });
        this.#line(
          `▸ ${event.subagent_type} ${this.#resuming.has(event.child_thread_id) ? "resumed" : "started"} (thread ${event.child_thread_id})`,
        );
        return;
      case "subagent_finished":
        this.#finished(event.run);
        return;
      case "subagent_waiting": {
        const running = this.#running.get(event.child_thread_id);
        if (running) running.waiting = true;
        this.#line(
          `⏸ ${event.subagent_type} waiting for approval (thread ${event.child_thread_id})`,
        );
        return;
      }
      case "approval_requested":
        // The chat shows each pending request in full once the run has paused (cli/turn.ts).
        return;
      case "run_finished":
        // Nothing of the main agent was shown (no tokens, no message events): show the answer.
        if (!this.#mainWrote && event.result.output) this.#mainText(event.result.output);
        this.end();
        return;
      case "run_started":
        return;
    }
  }

  /** Redraws the status line of running subagents; does nothing unless live. */
  tick(): void {
    // Mid-line (the main agent is writing) a status line would split its text: wait.
    if (!this.#live || this.#running.size === 0 || !this.#atLineStart) return;
    this.#drawStatus();
  }

  /**
   * Writes a line from outside the run (a background task that ended), unless the main agent is
   * mid-sentence: then it answers false and writes nothing, for the caller to try again later.
   */
  notice(text: string): boolean {
    if (!this.#atLineStart) return false;
    this.#line(text);
    return true;
  }

  /** Erases the status line and ends the current line: call when the run ends or fails. */
  end(): void {
    this.#eraseStatus();
    if (!this.#atLineStart) this.#emit("\n");
  }

  #mainText(text: string): void {
    if (!text) return;
    this.#eraseStatus();
    this.#emit(text);
    this.#mainStreamed = true;
    this.#mainWrote = true;
  }

  #mainMessage(text: string): void {
    if (!this.#mainStreamed) this.#mainText(text);
    this.#mainStreamed = false;
    // A turn has ended: whatever comes next (subagent lines, the next turn) starts a new line.
    this.end();
  }

  #countChildToken(childThreadId: string): void {
    const running = this.#running.get(childThreadId);
    if (running) running.tokens += 1;
  }

  #finished(run: SubagentRun): void {
    this.#subagentCalls.add(run.id);
    const running = this.#running.get(run.child_thread_id);
    this.#running.delete(run.child_thread_id);
    const elapsed = elapsedMs(run) ?? (running ? this.#now() - running.startedAt : undefined);
    const facts = [
      elapsed === undefined ? undefined : formatDuration(elapsed),
      plural(run.rounds, "round"),
      running && running.tokens > 0 ? plural(running.tokens, "token") : undefined,
    ].filter((fact) => fact !== undefined);
    if (run.status === "completed") {
      const preview = oneLine(run.result_preview, PREVIEW_CHARS);
      this.#line(
        `✓ ${run.subagent_type} completed (${facts.join(", ")})${preview ? `: ${preview}` : ""}`,
      );
    } else {
      const reason = oneLine(run.error ?? run.result_preview, PREVIEW_CHARS);
      this.#line(
        `✗ ${run.subagent_type} ${STATUS_WORDS[run.status]} (${facts.join(", ")})${reason ? `: ${reason}` : ""}`,
      );
    }
  }

  /** Writes a permanent line, then puts the status line back below it. */
  #line(text: string): void {
    this.end();
    this.#emit(`${text}\n`);
    if (this.#live && this.#running.size > 0) this.#drawStatus();
  }

  #drawStatus(): void {
    const now = this.#now();
    const parts = [...this.#running.values()].map((running) => {
      if (running.waiting) return `${running.slug} waiting for approval`;
      const tokens = running.tokens > 0 ? `, ${plural(running.tokens, "token")}` : "";
      return `${running.slug} ${Math.floor((now - running.startedAt) / 1000)}s${tokens}`;
    });
    let status = `… running: ${parts.join(" · ")}`;
    if (this.#columns !== undefined && this.#columns > 1) {
      status = Array.from(status)
        .slice(0, this.#columns - 1)
        .join("");
    }
    this.#write(`${ERASE_LINE}${status}`);
    this.#statusShown = true;
  }

  #eraseStatus(): void {
    if (!this.#statusShown) return;
    this.#write(ERASE_LINE);
    this.#statusShown = false;
  }

  #emit(text: string): void {
    if (!text) return;
    this.#write(text);
    this.#atLineStart = text.endsWith("\n");
  }
}

const STATUS_WORDS: Readonly<Record<Exclude<SubagentRun["status"], "completed">, string>> = {
  failed: "failed",
  timeout: "timed out",
  cancelled: "cancelled",
  waiting: "waiting for approval",
};

/** The run's own duration from its record, when both timestamps parse. */
function elapsedMs(run: SubagentRun): number | undefined {
  const ms = Date.parse(run.finished_at) - Date.parse(run.started_at);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}
