/**
 * Approvals in a fleet on PostgreSQL (issue 39, "Durability"): a run paused through one process
 * is resumed through another, after the first was killed; a resume is a queued run like any
 * other, so when the worker running it dies mid-resume another takes it over, and the answers
 * the dead worker had already acted on are not acted on again. Through the official SDK, real
 * processes and a fake OpenAI server.
 */
import type { Run } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { crash, type GatedMail, gatedValues, SEND, startGatedMail } from "../support/gated-mail.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { until } from "../support/until.js";

const approve = { decisions: [{ type: "approve" }] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls an async condition every 50 ms; fails after `limitMs` with `describe()`. */
async function untilAsync(
  condition: () => Promise<boolean>,
  limitMs: number,
  describe: () => string,
) {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${limitMs} ms\n${describe()}`);
    await sleep(50);
  }
}

describe("approvals in a fleet (postgres, two processes)", { timeout: 240_000 }, () => {
  let mail: GatedMail | undefined;
  afterEach(async () => {
    await mail?.close();
    mail = undefined;
  });

  it("resumes through another process, and a worker that dies mid-resume is taken over without acting twice", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"), "approvals");
    mail = await startGatedMail({
      writers: ["one", "two"],
      extraEnv: { DATABASE_URL: databaseUrl, SUBAGENT_THREAD_LEASE_MS: "900" },
    });
    const { admin, bossId } = mail;
    if (!admin) throw new Error("the fleet scenario keeps its admin runtime");
    const all = { serveArgs: ["--role", "all"] };
    // C only takes over at the end (step 5); started with the others, as starting takes a while.
    const [a, b, c] = await Promise.all([mail.start(all), mail.start(all), mail.start(all)]);

    // 1. Paused through A: boss's own gated call.
    const thread = await mail.sdk(a).threads.create();
    const threadId = thread.thread_id;
    const paused = gatedValues(
      await mail.sdk(a).runs.wait(threadId, bossId, {
        input: { messages: [{ type: "human", content: "mail everyone" }] },
      }),
    );
    expect(paused.__interrupt__?.map((pending) => pending.value.actionRequests)).toEqual([
      [expect.objectContaining({ name: SEND, args: { text: "from boss" } })],
    ]);

    // 2. A dies before anyone answers; B takes the resume (its own worker claims it). The two
    // writers pause on their gates; the reader finishes meanwhile.
    await crash(a);
    const api = mail.sdk(b);
    const waiting = gatedValues(
      await api.runs.wait(threadId, bossId, {
        command: { resume: approve },
      }),
    );
    expect(await mail.sent()).toEqual(["from boss"]);
    const requests = waiting.__interrupt__ ?? [];
    expect(requests.map((pending) => pending.value.subagent?.description).sort()).toEqual([
      "one",
      "two",
    ]);
    expect(mail.answered("reader")).toBe(1);
    const [resumeRun] = await api.runs.list(threadId, { limit: 1 });
    expect((await admin.runInfo("alice", resumeRun?.run_id ?? ""))?.runner_pid).toBe(b.child.pid);
    // Joined once over, from any process, the paused run answers with what it waits on.
    const joined = gatedValues(await mail.sdk(b).runs.join(threadId, resumeRun?.run_id ?? ""));
    expect(joined.__interrupt__?.map((pending) => pending.id).sort()).toEqual(
      requests.map((pending) => pending.id).sort(),
    );

    // 3. A bad answer is refused before anything is queued, naming the field; both stay pending.
    const runsBefore = (await api.runs.list(threadId)).length;
    await expect(
      api.runs.wait(threadId, bossId, { command: { resume: { decisions: [{ type: "maybe" }] } } }),
    ).rejects.toMatchObject({ status: 422 });
    expect(await api.runs.list(threadId)).toHaveLength(runsBefore);

    // 4. One resume answers both through B, which runs it; "one" finishes, "two" sends its mail
    // and then B dies while two's model call is under way.
    mail.hanging.add("two");
    const resume: Run = await api.runs.create(threadId, bossId, {
      command: {
        resume: Object.fromEntries(requests.map((pending) => [pending.id, approve])),
      },
    });
    expect((await admin.runInfo("alice", resume.run_id))?.runner_pid).toBe(b.child.pid);
    await until(
      () =>
        mail?.fake.requests.some(
          (request) =>
            request.model === "writer-model" &&
            request.messages.some((m) => m.role === "tool") &&
            request.messages.find((m) => m.role === "user")?.content === "two",
        ) === true,
      60_000,
    );
    // "one"'s task call has ended on the parent's thread: its record is durable as a pending
    // write of the step that two's call still holds open.
    await untilAsync(
      async () => (await parentRecords(threadId)).some((run) => run.description === "one"),
      30_000,
      () => b.output(),
    );
    expect((await mail.sent()).sort()).toEqual(["from boss", "from one", "from two"]);
    await crash(b);
    mail.hanging.clear();

    // 5. C's worker (the only one left) takes the run over as its attempt 2, and finishes it.
    const done = gatedValues(await mail.sdk(c).runs.join(threadId, resume.run_id));
    const record = await admin.runInfo("alice", resume.run_id);
    expect(record?.status, record?.status_reason ?? "").toBe("success");
    expect(record?.attempt).toBe(2);
    expect(record?.runner_pid).toBe(c.child.pid);
    expect(done.messages.at(-1)?.content).toBe("final answer");
    expect((done.subagent_runs ?? []).map((run) => [run.description, run.status]).sort()).toEqual([
      ["one", "completed"],
      ["read", "completed"],
      ["two", "completed"],
    ]);

    // Every gated call ran once; nothing finished ran again: "one" and the reader not at all
    // after they ended, "two" only its model call that B's death cut.
    expect((await mail.sent()).sort()).toEqual(["from boss", "from one", "from two"]);
    expect(mail.answered("boss")).toBe(2);
    expect(mail.answered("one")).toBe(2);
    expect(mail.answered("two")).toBe(2);
    expect(mail.answered("reader")).toBe(1);
    expect(mail.fake.failures).toEqual([]);

    /** The task records the parent thread's newest checkpoint holds as pending writes. */
    async function parentRecords(id: string): Promise<SubagentRun[]> {
      const tuple = await admin?.checkpointer.getTuple({
        configurable: { thread_id: id, checkpoint_ns: "" },
      });
      return (tuple?.pendingWrites ?? [])
        .filter(([, channel]) => channel === "subagent_runs")
        .flatMap(([, , value]) => (Array.isArray(value) ? (value as SubagentRun[]) : []))
        .filter((run) => run.status === "completed");
    }
  });
});
