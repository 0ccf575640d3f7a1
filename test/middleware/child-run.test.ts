import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { linkedAbortSignal } from "../../middleware/child-run.js";

describe("linkedAbortSignal (the signal a child run gets)", () => {
  it("aborts with the source's reason", () => {
    const source = new AbortController();
    const link = linkedAbortSignal(source.signal);
    expect(link.signal.aborted).toBe(false);
    const reason = new Error("run cancelled");
    source.abort(reason);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe(reason);
  });

  it("is aborted at once when the source already is", () => {
    const link = linkedAbortSignal(AbortSignal.abort("gone"));
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe("gone");
  });

  it("leaves no listener on a composite source once disposed, so Node can free it", () => {
    // Inside a tool the source is langchain's AbortSignal.any composite; Node keeps such a
    // signal alive while it has abort listeners, so one left behind per call is a leak.
    const source = AbortSignal.any([new AbortController().signal]);
    const link = linkedAbortSignal(source);
    // What LangGraph's stream() does to the signal it is given: a listener it never removes.
    link.signal.addEventListener("abort", () => {});
    expect(getEventListeners(source, "abort")).toHaveLength(1);
    link.dispose();
    expect(getEventListeners(source, "abort")).toHaveLength(0);
  });
});
