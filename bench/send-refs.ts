/**
 * `npx tsx bench/send-refs.ts [turns]`: bytes a delegating conversation stores on SQLite with
 * delta storage, with the `Send`-compacting saver (`openSaver("sqlite")`'s) and without it (the
 * plain `DeltaHistorySqliteSaver`). The offline model makes one `task` call per turn, as in
 * test/runtime/checkpoint-storage.test.ts. Prints bytes per turn at the start and the end of the
 * conversation and the totals; the figures are for the send-compaction prototype's report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { DeltaHistorySqliteSaver } from "../checkpoints/sqlite-saver.js";
import { createRuntime, type Runtime } from "../runtime.js";

const TURNS = Number(process.argv[2] ?? 40);

function storedBytes(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    if (!db.prepare("select 1 from sqlite_master where name = 'checkpoints'").get()) return 0;
    const row = db
      .prepare(
        `select (select coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints)
              + (select coalesce(sum(length(value)), 0) from writes) as bytes`,
      )
      .get() as { bytes: number };
    return row.bytes;
  } finally {
    db.close();
  }
}

async function converse(compacting: boolean): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "send-refs-bench-"));
  const file = join(dir, "checkpoints.sqlite");
  const plain = compacting ? undefined : DeltaHistorySqliteSaver.fromConnString(file);
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime({
      dataDir: dir,
      env: {},
      warn: () => {},
      // A lent saver defaults to full storage; ask for delta so only the saver differs.
      ...(plain ? { checkpointer: plain, checkpointStorage: "delta" as const } : {}),
    });
    await runtime.agents.ensure("alice", {
      slug: "worker",
      name: "worker",
      description: "the worker subagent",
      backend_id: "SubAgentBackend",
      config_json: { context: { model: "offline", system_prompt: "You are worker." } },
    });
    await runtime.agents.ensure("alice", {
      slug: "boss",
      name: "boss",
      description: "the boss main agent",
      is_default: true,
      config_json: {
        context: { model: "offline", system_prompt: "You are boss.", subagents: ["worker"] },
      },
    });
    const after = [storedBytes(file)];
    for (let turn = 1; turn <= TURNS; turn += 1) {
      await runtime.run({ uid: "alice", threadId: "t", input: `question number ${turn}` });
      after.push(storedBytes(file));
    }
    return after;
  } finally {
    await runtime?.close();
    plain?.db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const perTurn = (after: number[], from: number, to: number) =>
  Math.round(((after[to] ?? 0) - (after[from - 1] ?? 0)) / (to - from + 1));

const compact = await converse(true);
const plain = await converse(false);
const last = TURNS;
const rows = [
  ["saver", "bytes/turn 1-5", `bytes/turn ${last - 4}-${last}`, "total"],
  ["compacting", perTurn(compact, 1, 5), perTurn(compact, last - 4, last), compact[last]],
  ["plain delta", perTurn(plain, 1, 5), perTurn(plain, last - 4, last), plain[last]],
];
for (const row of rows) console.log(row.map((c) => String(c).padStart(16)).join(""));
console.log(
  `per turn, every turn (compacting): ${compact
    .slice(1)
    .map((b, i) => b - (compact[i] ?? 0))
    .join(" ")}`,
);
console.log(
  `per turn, every turn (plain):      ${plain
    .slice(1)
    .map((b, i) => b - (plain[i] ?? 0))
    .join(" ")}`,
);
