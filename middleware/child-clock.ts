/**
 * A subagent's time limit that counts its running time only: started once the time it ran
 * before is known (a child resumed after a person's decision has used part of its limit, and
 * the wait for the decision is not counted), stopped when the call ends.
 */
export class ChildClock {
  readonly #controller = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly limitMs: number) {}

  /** Aborts (with a `TimeoutError`) once the limit is used up. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Starts counting, `usedMs` of the limit being used already. Later calls do nothing. */
  start(usedMs = 0): void {
    if (this.#timer !== undefined || this.signal.aborted) return;
    const left = Math.max(0, this.limitMs - usedMs);
    this.#timer = setTimeout(() => {
      this.#controller.abort(new DOMException("subagent time limit reached", "TimeoutError"));
    }, left);
  }

  /** Stops counting (the call is over). */
  stop(): void {
    clearTimeout(this.#timer);
  }
}
