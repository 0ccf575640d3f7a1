/**
 * A long conversation costs what it says, not its square: on the embedded default (SQLite in
 * the data dir), on PostgreSQL (`DATABASE_URL`) and on the memory saver, opened with no storage
 * option, as a user does, the bytes a delegating turn stores stay flat as the conversation grows. What grew
 * before: the messages in every checkpoint (now delta writes, `checkpoints/channel-storage.ts`)
 * and langchain's tool routing, whose `Send` packets carry the whole state at every tool step
 * (now stored by reference, `checkpoints/send-refs.ts`). Each turn delegates to two subagents
 * in parallel, so a step holds several packets.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../runtime.js";
import { memoryCheckpointBytes, sqliteCheckpointBytes } from "../support/checkpoint-bytes.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

const TURNS = 16;
/** 16 turns of three agents each take ~10 s here; a loaded machine can take several times that. */
const TIMEOUT_MS = 120_000;

/** Bytes of every row of the saver's tables, read from the database itself. */
type Measure = () => Promise<number>;

function postgresBytes(url: string): Measure {
  return async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ bytes: string }>(
        `select (select coalesce(sum(pg_column_size(c.*)), 0) from checkpoints c)
              + (select coalesce(sum(pg_column_size(b.*)), 0) from checkpoint_blobs b)
              + (select coalesce(sum(pg_column_size(w.*)), 0) from checkpoint_writes w) as bytes`,
      );
      return Number(rows[0]?.bytes ?? 0);
    } finally {
      await client.end();
    }
  };
}

describe("checkpoint bytes per turn stay flat", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(
    env: NodeJS.ProcessEnv,
    options: Partial<RuntimeOptions> = {},
  ): Promise<{ runtime: Runtime; dataDir: string }> {
    const dataDir = mkdtempSync(join(tmpdir(), "linear-storage-"));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const runtime = await createRuntime({ dataDir, env, warn: () => {}, ...options });
    cleanups.push(() => runtime.close());
    await runtime.agents.ensure("alice", subagentPayload("researcher", "offline"));
    await runtime.agents.ensure("alice", subagentPayload("critic", "offline"));
    await runtime.agents.ensure("alice", {
      ...mainAgentPayload("lead", "offline", ["researcher", "critic"]),
      is_default: true,
    });
    return { runtime, dataDir };
  }

  async function converse(runtime: Runtime, measure: Measure): Promise<number[]> {
    const after = [await measure()];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      await runtime.run({ uid: "alice", threadId: "long", input: `question number ${turn}` });
      after.push(await measure());
    }
    return after;
  }

  const perTurn = (after: number[], from: number, to: number) =>
    ((after[to] ?? 0) - (after[from - 1] ?? 0)) / (to - from + 1);

  async function expectFlat(runtime: Runtime, measure: Measure) {
    const after = await converse(runtime, measure);
    // Turn 1 also stores the first snapshots; compare the next turns with the last ones.
    const early = perTurn(after, 2, 5);
    const late = perTurn(after, TURNS - 3, TURNS);
    expect(late).toBeLessThanOrEqual(1.15 * early);
    // And the conversation reads back whole, with both children's records per turn.
    const [latest] = await runtime.history("alice", "long");
    expect(latest?.subagentRuns).toHaveLength(2 * TURNS);
    expect(latest?.messages.filter((m) => m.getType() === "human")).toHaveLength(TURNS);
    expect(latest?.messages.filter((m) => m.getType() === "tool")).toHaveLength(2 * TURNS);
  }

  it(
    "on the embedded SQLite default",
    async () => {
      const { runtime, dataDir } = await open({});
      await expectFlat(runtime, async () => sqliteCheckpointBytes(dataDir));
    },
    TIMEOUT_MS,
  );

  it(
    "on PostgreSQL through DATABASE_URL",
    async () => {
      const url = await createTestDatabase(inject("postgresUrl"), "linear");
      const { runtime } = await open({ DATABASE_URL: url });
      await expectFlat(runtime, postgresBytes(url));
    },
    TIMEOUT_MS,
  );

  it(
    "on the memory saver",
    async () => {
      const { runtime } = await open({}, { checkpointer: "memory" });
      const saver = runtime.checkpointer;
      if (!(saver instanceof MemorySaver)) throw new Error("expected the memory saver");
      await expectFlat(runtime, async () => memoryCheckpointBytes(saver));
    },
    TIMEOUT_MS,
  );
});
