import { describe, expect, it } from "vitest";
import { branchesOf } from "../../web/src/branches.js";
import type { HistoryState } from "../../web/src/fork-point.js";

const state = (id: string, parent: string | undefined, messages: string[]): HistoryState => ({
  checkpoint: { checkpoint_id: id },
  parent_checkpoint: parent ? { checkpoint_id: parent } : null,
  values: { messages: messages.map((text) => ({ id: text, type: "human", content: text })) },
  next: [],
});

describe("branchesOf", () => {
  it("lists each leaf of the checkpoint tree, the head first and marked current", () => {
    // c1 (empty start) → c2 "first" → c3 "first, one"; an edit forked at c1: c4 "second" →
    // c5 "second, two"; a regenerate forked at c4: c6 "second, three" (the head).
    const history = [
      state("c6", "c4", ["second", "three"]),
      state("c5", "c4", ["second", "two"]),
      state("c4", "c1", ["second"]),
      state("c3", "c2", ["first", "one"]),
      state("c2", "c1", ["first"]),
      state("c1", undefined, []),
    ];
    const branches = branchesOf(history);
    expect(branches.map((branch) => [branch.checkpointId, branch.current])).toEqual([
      ["c6", true],
      ["c5", false],
      ["c3", false],
    ]);
    expect(branches[1]?.messages).toHaveLength(2);
  });

  it("one straight history is one branch; an empty one none", () => {
    expect(branchesOf([state("b", "a", ["hi"]), state("a", undefined, [])])).toHaveLength(1);
    expect(branchesOf([])).toEqual([]);
  });
});
