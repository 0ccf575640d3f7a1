/**
 * A gate a scripted model call waits at before it answers: the test sees the call arrive
 * (`reached`) and lets it answer (`release()`); an abort of the run ends the wait as usual.
 */
export class Gate {
  reached = false;
  private open: () => void = () => {};
  private readonly opened = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  release(): void {
    this.open();
  }

  async pass(signal: AbortSignal | undefined): Promise<void> {
    this.reached = true;
    if (signal === undefined) return this.opened;
    if (signal.aborted) throw signal.reason;
    let onAbort: () => void = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.opened, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
