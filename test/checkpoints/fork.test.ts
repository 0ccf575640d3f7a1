/**
 * Time travel directly on each saver: run a small graph, `updateState` an OLDER checkpoint with
 * an edit, continue from the fork. The stock `PostgresSaver` 1.0.5 loses the edit
 * (langgraphjs#1812, see checkpoints/postgres-saver.ts); `ForkSafePostgresSaver` keeps it.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  compareChannelVersions,
  maxChannelVersion,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { nextForkSafeVersion } from "../../checkpoints/postgres-saver.js";
import { openPostgresSaver, openSaver } from "../../checkpoints/savers.js";
import { ErrorCode } from "../../errors.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const State = Annotation.Root({
  value: Annotation<string>,
  steps: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

/** START → a → b → END; each node appends its name to `value` and counts a step. */
function buildGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode("a", (state) => ({ value: `${state.value}-a`, steps: 1 }))
    .addNode("b", (state) => ({ value: `${state.value}-b`, steps: 1 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", END)
    .compile({ checkpointer });
}

interface OpenedSaver {
  saver: BaseCheckpointSaver;
  close(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), "sg-fork-sqlite-"));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));
const freshDatabase = () => createTestDatabase(inject("postgresUrl"), "fork");

const SAVERS: { name: string; keepsForks: boolean; open(): Promise<OpenedSaver> }[] = [
  { name: "MemorySaver", keepsForks: true, open: async () => openSaver("memory") },
  {
    name: "SqliteSaver (openSaver)",
    keepsForks: true,
    open: async () => openSaver("sqlite", join(sqliteDir, "checkpoints.sqlite")),
  },
  {
    name: "stock PostgresSaver",
    keepsForks: false,
    open: async () => {
      // Built from a pool like ours, so the only difference is getNextVersion.
      const saver = new PostgresSaver(new pg.Pool({ connectionString: await freshDatabase() }));
      await saver.setup();
      return { saver, close: () => saver.end() };
    },
  },
  {
    name: "ForkSafePostgresSaver",
    keepsForks: true,
    open: async () => openPostgresSaver(await freshDatabase()),
  },
];

describe.each(SAVERS)("time-travel fork on $name", ({ keepsForks, open }) => {
  it(
    keepsForks ? "keeps the fork's edit" : "loses the fork's edit (langgraphjs#1812)",
    async () => {
      const opened = await open();
      try {
        const graph = buildGraph(opened.saver);
        const config = { configurable: { thread_id: "t-fork" } };
        expect(await graph.invoke({ value: "x" }, config)).toEqual({ value: "x-a-b", steps: 2 });

        // The older checkpoint: the input is in, node `a` has not run yet.
        const history = [];
        for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
        const older = history.find((snapshot) => snapshot.next.join() === "a");
        expect(older?.values).toEqual({ value: "x", steps: 0 });
        if (!older) throw new Error("no checkpoint before node a");

        const forkConfig = await graph.updateState(older.config, { value: "y" });
        const forked = await graph.getState(forkConfig);
        const continued = await graph.invoke(null, forkConfig);

        if (keepsForks) {
          expect(forked.values).toEqual({ value: "y", steps: 0 });
          expect(forked.next).toEqual(["a"]);
          expect(continued).toEqual({ value: "y-a-b", steps: 2 });
        } else {
          // The fork's blobs got versions the original branch already used (value → 3, …) and
          // were dropped by ON CONFLICT DO NOTHING: the fork reads the original branch's
          // values (`x-a`), nothing is left to run, and the edit `y` is gone.
          expect(forked.values.value).toBe("x-a");
          expect(forked.next).toEqual([]);
          expect(continued.value).toBe("x-a");
        }
        // The original branch is intact either way.
        const values = [];
        for await (const snapshot of graph.getStateHistory(config)) values.push(snapshot.values);
        expect(values).toContainEqual({ value: "x-a-b", steps: 2 });
      } finally {
        await opened.close();
      }
    },
  );
});

describe("ForkSafePostgresSaver versions", () => {
  const FORMAT = /^\d{32}\.\d{16}$/;

  it("start at counter 1 and grow the counter by one per call, each unique", () => {
    const first = nextForkSafeVersion(undefined);
    expect(first).toMatch(FORMAT);
    expect(first.startsWith(`${"0".repeat(31)}1.`)).toBe(true);
    const second = nextForkSafeVersion(first);
    expect(second.startsWith(`${"0".repeat(31)}2.`)).toBe(true);
    // Two forks from the same version: same counter, different versions (different blobs).
    const forks = new Set(Array.from({ length: 100 }, () => nextForkSafeVersion(first)));
    expect(forks.size).toBe(100);
    // A stock (numeric) version continues its counter.
    expect(nextForkSafeVersion(41).startsWith(`${"0".repeat(30)}42.`)).toBe(true);
    for (const foreign of ["not a version", -1, 1.5]) {
      expect(() => nextForkSafeVersion(foreign)).toThrow(
        expect.objectContaining({
          code: ErrorCode.CheckpointIncompatible,
          message: expect.stringContaining("unexpected channel version"),
        }),
      );
    }
  });

  it("order by counter under `>` and LangGraph's compareChannelVersions/maxChannelVersion", () => {
    // Across digit-count boundaries (9 → 10, 99 → 100, …), where unpadded strings misorder.
    const chain = [nextForkSafeVersion(undefined)];
    for (let i = 0; i < 1200; i += 1) chain.push(nextForkSafeVersion(chain.at(-1)));
    for (let i = 1; i < chain.length; i += 1) {
      const [before, after] = [chain[i - 1] ?? "", chain[i] ?? ""];
      expect(after > before).toBe(true);
      expect(after > "").toBe(true); // "" is LangGraph's null version for string versions
      expect(compareChannelVersions(after, before)).toBe(1);
      expect(compareChannelVersions(before, after)).toBe(-1);
    }
    const shuffled = [...chain].sort(() => Math.random() - 0.5);
    expect(maxChannelVersion(...shuffled)).toBe(chain.at(-1));
    // Whatever the random parts, a higher counter wins.
    const low = `${"0".repeat(31)}9.9999999999999999`;
    const high = nextForkSafeVersion(low);
    expect(high > low).toBe(true);
    expect(maxChannelVersion(low, high)).toBe(high);
  });
});
