import { describe, expect, it } from "vitest";
import { checkpointBefore, type HistoryState } from "../../web/src/fork-point.js";

const state = (id: string, messages: string[], next: string[] = []): HistoryState => ({
  checkpoint: { checkpoint_id: id },
  values: { messages: messages.map((messageId) => ({ id: messageId })) },
  next,
});

describe("checkpointBefore", () => {
  // Newest first, as the API lists them: two turns (h1 → a1, h2 → a2).
  const history = [
    state("c6", ["h1", "a1", "h2", "a2"]),
    state("c5", ["h1", "a1", "h2"], ["model"]),
    state("c4", ["h1", "a1"]),
    state("c3", ["h1", "a1"], ["model"]),
    state("c2", ["h1"], ["model"]),
    state("c1", [], ["__start__"]),
  ];

  it("finds the end of the turn before a message, preferring a finished step", () => {
    expect(checkpointBefore(history, ["h1", "a1"])).toBe("c4");
    expect(checkpointBefore(history, ["h1", "a1", "h2"])).toBe("c5");
  });

  it("the first message forks from the thread's empty start", () => {
    expect(checkpointBefore(history, [])).toBe("c1");
  });

  it("matches by ids, not by count: another branch's messages are not it", () => {
    expect(checkpointBefore(history, ["h1", "other"])).toBeUndefined();
    expect(checkpointBefore([], ["h1"])).toBeUndefined();
  });
});
