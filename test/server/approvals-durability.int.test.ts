/**
 * Approvals survive the process (issue 39, "Durability"), on the embedded default: one server
 * process on a SQLite data dir pauses a run, is killed (SIGKILL) before anyone answers, and the
 * next process on the same data dir takes the resume through the official SDK. Twice in one
 * turn: the main agent's own gated call, then a subagent's, while a sibling subagent finishes.
 * Every gated call runs exactly once, and nothing that had finished runs again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { crash, type GatedMail, gatedValues, SEND, startGatedMail } from "../support/gated-mail.js";

const approve = { decisions: [{ type: "approve" }] };

describe("approvals across a crash (sqlite, one process)", { timeout: 180_000 }, () => {
  let mail: GatedMail | undefined;
  let dataDir = "";
  afterEach(async () => {
    await mail?.close();
    mail = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = "";
  });

  it("resumes a main agent's and then a subagent's paused call on the next process, each run once", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "approvals-durability-"));
    mail = await startGatedMail({ writers: ["one"], dataDir });

    // 1. The first process: boss's own gated call pauses the turn before any tool runs.
    const first = await mail.start({ dataDir });
    const thread = await mail.sdk(first).threads.create();
    const paused = gatedValues(
      await mail.sdk(first).runs.wait(thread.thread_id, mail.bossId, {
        input: { messages: [{ type: "human", content: "mail everyone" }] },
      }),
    );
    const [bossRequest] = paused.__interrupt__ ?? [];
    expect(bossRequest?.value.actionRequests).toEqual([
      expect.objectContaining({ name: SEND, args: { text: "from boss" } }),
    ]);
    expect(bossRequest?.value.subagent).toBeUndefined();
    expect(await mail.sent()).toEqual([]);

    // 2. Killed before anyone answers; the next process on the same data dir still shows the
    // request, and takes the resume.
    await crash(first);
    const second = await mail.start({ dataDir });
    const client = mail.sdk(second);
    const state = await client.threads.getState(thread.thread_id);
    expect(state.tasks.flatMap((task) => task.interrupts.map((pending) => pending.id))).toEqual([
      bossRequest?.id,
    ]);
    // The paused run's record still says what it waits for (not that its process stopped).
    const [pausedRun] = await client.runs.list(thread.thread_id);
    expect(pausedRun).toMatchObject({
      status: "interrupted",
      status_reason: expect.stringContaining(`waiting for approval of ${SEND}`),
    });
    const waiting = gatedValues(
      await client.runs.wait(thread.thread_id, mail.bossId, {
        command: { resume: approve },
      }),
    );
    // boss's mail went; the writer paused on its own gate while the reader finished.
    expect(await mail.sent()).toEqual(["from boss"]);
    const [writerRequest] = waiting.__interrupt__ ?? [];
    expect(writerRequest?.value.subagent?.subagent_type).toBe("writer");
    expect(writerRequest?.value.actionRequests).toEqual([
      expect.objectContaining({ name: SEND, args: { text: "from one" } }),
    ]);
    expect(mail.answered("reader")).toBe(1);

    // 3. Killed again before the writer's request is answered; a third process resumes it.
    await crash(second);
    const third = await mail.start({ dataDir });
    const done = gatedValues(
      await mail.sdk(third).runs.wait(thread.thread_id, mail.bossId, {
        command: { resume: approve },
      }),
    );
    expect(done.__interrupt__ ?? []).toEqual([]);
    expect(done.messages.at(-1)?.content).toBe("final answer");
    expect(
      Object.fromEntries((done.subagent_runs ?? []).map((run) => [run.subagent_type, run.status])),
    ).toEqual({ writer: "completed", reader: "completed" });

    // Each gated call ran once; nothing finished ran again: boss's first turn and the reader
    // once, the writer's first call once (its second after the resume), boss's answer once.
    expect(await mail.sent()).toEqual(["from boss", "from one"]);
    expect(mail.answered("boss")).toBe(2);
    expect(mail.answered("one")).toBe(2);
    expect(mail.answered("reader")).toBe(1);
    expect(mail.fake.failures).toEqual([]);
  });
});
