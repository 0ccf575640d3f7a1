/**
 * Runs whose process stopped are recorded `interrupted` and free their threads (see
 * `runs/abandoned-runs.ts`), on SQLite and PostgreSQL: a run of this machine whose pid is gone at
 * once, a run of another machine once its lease has run out, and never a run that may live.
 * The stopped runs' rows are written as their process wrote them (`RunRepository.start` and
 * `acquireThread`); the dead process is a real one that this test started and killed.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { type Database, openPostgresDatabase, openSqliteDatabase } from "../../store/database.js";
import { RunRepository } from "../../store/runs.js";
import { currentProcess, type ProcessIdentity, startTimeOf } from "../../util/process-identity.js";
import { expectFailure } from "../agents/helpers.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const HOUR = 3_600_000;

/** A process of this machine that has exited, as the row of a run it ran names it. */
async function deadProcessOfThisMachine(): Promise<ProcessIdentity> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
    stdio: "ignore",
  });
  await once(child, "spawn");
  const pid = child.pid ?? -1;
  const identity = { ...currentProcess("dead-instance"), pid, pidStart: startTimeOf(pid) };
  child.kill("SIGKILL");
  await once(child, "exit");
  return identity;
}

/** A process of another machine: its pid means nothing here. */
const ELSEWHERE: ProcessIdentity = {
  instanceId: "remote-instance",
  host: "worker-7",
  pid: 31337,
  pidScope: "linux:another-boot:pid:[4026531836]",
  pidStart: "12345",
};

describe.each(["sqlite", "postgres"] as const)("runs of stopped processes (%s)", (dialect) => {
  let dataDir: string;
  let target: string;
  let database: Database;
  let runtime: Runtime | undefined;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "abandoned-runs-"));
    target =
      dialect === "sqlite"
        ? join(dataDir, "agents.sqlite")
        : await createTestDatabase(inject("postgresUrl"), "abandoned");
    // The stopped processes' view of the shared database.
    database =
      dialect === "sqlite" ? await openSqliteDatabase(target) : await openPostgresDatabase(target);
  });
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const open = () =>
    createRuntime({
      dataDir,
      database: target,
      checkpointer: dialect,
      env: {},
      warn: () => undefined,
    });

  /** Alice's default (offline) agent, a thread of hers, and a run on it that `runner` ran. */
  async function runLeftRunning(
    current: Runtime,
    threadId: string,
    runner: ProcessIdentity,
    leaseFrom: Date,
  ) {
    if (!(await current.agents.getDefault("alice"))) {
      await current.agents.create("alice", { slug: "boss", name: "Boss", is_default: true });
    }
    await current.threads.create("alice", { threadId });
    const agent = await current.agents.getDefault("alice");
    // The stopped process's repository, with the clock it had when it took the lease.
    const theirs = new RunRepository(database.db, { now: () => leaseFrom });
    const runId = `run-of-${threadId}`;
    expect(await theirs.acquireThread(threadId, runId, 30_000)).toBe(true);
    await theirs.start({ runId, threadId, uid: "alice", agentId: agent?.id ?? "", runner });
    return runId;
  }

  it("records a run of this machine whose process is gone interrupted, and runs its thread at once", async () => {
    runtime = await open();
    const dead = await deadProcessOfThisMachine();
    // Its lease has most of its 30 s left: a new run must not wait for it.
    const runId = await runLeftRunning(runtime, "t-dead", dead, new Date());
    const result = await runtime.run({ uid: "alice", threadId: "t-dead", input: "hello" });
    expect(result.output).not.toBe("");

    // Recorded by the run that took the thread (read without any repair on the way).
    const row = await new RunRepository(database.db).find(runId);
    expect(row).toMatchObject({ status: "interrupted", subagent_runs: "[]" });
    expect(row?.status_reason).toContain(`pid ${dead.pid} on ${dead.host}`);
    expect(row?.status_reason).toContain("stopped before the run finished");
    expect((await runtime.runInfo("alice", result.runId))?.status).toBe("success");
  });

  it("tells a thread busy while its run may live, and records a dead one's run when its status is read", async () => {
    runtime = await open();
    const dead = await deadProcessOfThisMachine();
    const deadRun = await runLeftRunning(runtime, "t-read-dead", dead, new Date());
    await runLeftRunning(runtime, "t-read-live", ELSEWHERE, new Date());

    // Another process's live run: busy. A dead process's run: recorded, and the thread is not.
    expect(await runtime.threads.get("alice", "t-read-live")).toMatchObject({ busy: true });
    expect(await runtime.threads.get("alice", "t-read-dead")).toMatchObject({
      busy: false,
      lastRunFailed: false,
    });
    expect(await new RunRepository(database.db).find(deadRun)).toMatchObject({
      status: "interrupted",
    });
    const listed = await runtime.threads.search("alice", { limit: 10 });
    expect(Object.fromEntries(listed.map((thread) => [thread.threadId, thread.busy]))).toEqual({
      "t-read-dead": false,
      "t-read-live": true,
    });
  });

  it("on start, records every run of a stopped process of this machine interrupted and frees its thread", async () => {
    runtime = await open();
    const dead = await deadProcessOfThisMachine();
    const runId = await runLeftRunning(runtime, "t-swept", dead, new Date());
    await runtime.close();

    runtime = await open();
    const runs = new RunRepository(database.db);
    expect(await runs.find(runId)).toMatchObject({ status: "interrupted" });
    expect(await runs.lease("t-swept")).toBeUndefined();
  });

  it("records a run of another machine interrupted once its lease has run out, and not before", async () => {
    runtime = await open();
    const expired = await runLeftRunning(
      runtime,
      "t-expired",
      ELSEWHERE,
      new Date(Date.now() - HOUR),
    );
    const live = await runLeftRunning(runtime, "t-live", ELSEWHERE, new Date());

    const info = await runtime.runInfo("alice", expired);
    expect(info).toMatchObject({ status: "interrupted", subagent_runs: [] });
    expect(info?.status_reason).toContain("pid 31337 on worker-7");
    expect(info?.status_reason).toContain("stopped renewing its hold on the thread");
    // Its thread is free again.
    expect(await new RunRepository(database.db).lease("t-expired")).toBeUndefined();

    // A lease still running may belong to a live process: the run stays, its thread busy.
    expect(await runtime.runInfo("alice", live)).toMatchObject({
      status: "running",
      status_reason: null,
    });
    await expectFailure(
      runtime.run({ uid: "alice", threadId: "t-live", input: "hello" }),
      ErrorCode.ThreadBusy,
    );
    expect((await runtime.runInfo("alice", live))?.status).toBe("running");
  });

  it("records the run whose expired lease a new run takes over interrupted", async () => {
    runtime = await open();
    const runId = await runLeftRunning(runtime, "t-taken", ELSEWHERE, new Date(Date.now() - HOUR));
    await runtime.run({ uid: "alice", threadId: "t-taken", input: "hello" });
    const row = await new RunRepository(database.db).find(runId);
    expect(row?.status).toBe("interrupted");
    expect(row?.status_reason).toContain("stopped renewing its hold on the thread");
  });
});
