/** What a Ctrl-C did. */
export type InterruptOutcome = "cancelled" | "quit";

/**
 * Ctrl-C policy: a press while a run is going cancels that run; a press with nothing to cancel
 * (idle, or the cancel already sent) asks to quit, which {@link quit} reports.
 *
 * It owns the run's AbortController, so "is something running" has one source of truth.
 */
export class Interrupts {
  #run: AbortController | undefined;
  #requestQuit: (() => void) | undefined;
  /** Settles on the first press that asks to quit; race it against whatever is awaited. */
  readonly quit: Promise<"quit">;

  constructor() {
    this.quit = new Promise((resolve) => {
      this.#requestQuit = () => resolve("quit");
    });
  }

  /** Starts a run: the returned signal aborts on the next Ctrl-C. */
  beginRun(): AbortSignal {
    this.#run = new AbortController();
    return this.#run.signal;
  }

  /** The run has ended, whichever way. */
  endRun(): void {
    this.#run = undefined;
  }

  /** Handles one Ctrl-C. */
  press(): InterruptOutcome {
    if (this.#run && !this.#run.signal.aborted) {
      this.#run.abort(new Error("cancelled with Ctrl-C"));
      return "cancelled";
    }
    this.#requestQuit?.();
    return "quit";
  }
}
