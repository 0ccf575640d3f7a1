import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { makeRuntime, type RuntimeFixture } from "../support/runtime-fixture.js";

/**
 * A run the library refuses (nothing to run, an unknown checkpoint) writes nothing: no thread is
 * claimed for a new id and no run record is left behind.
 */
describe("refused runs write nothing", () => {
  let fixture: RuntimeFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  async function refusal(promise: Promise<unknown>): Promise<SubagentGraphError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!SubagentGraphError.isInstance(error)) throw new Error(`expected a refusal, got ${error}`);
    return error;
  }

  it("a resume of a new thread id, or of a finished turn, and an unknown checkpoint", async () => {
    fixture = await makeRuntime({ saver: "sqlite" });
    const runtime = fixture.runtime;
    await runtime.agents.create("u1", { slug: "main", name: "Main", is_default: true });

    const fresh = await refusal(runtime.run({ uid: "u1", threadId: "never-used" }));
    expect([fresh.code, fresh.field]).toEqual([ErrorCode.Validation, "input"]);
    expect(await runtime.threads.search("u1")).toEqual([]);

    const done = await runtime.run({ uid: "u1", threadId: "t1", input: "hi" });
    const finished = await refusal(runtime.run({ uid: "u1", threadId: done.threadId }));
    expect(finished.message).toContain("has nothing to run");
    const unknown = await refusal(
      runtime.run({ uid: "u1", threadId: "t2", input: "hi", checkpointId: "nope" }),
    );
    expect([unknown.code, unknown.field]).toEqual([ErrorCode.NotFound, "checkpointId"]);

    expect((await runtime.threads.search("u1")).map((thread) => thread.threadId)).toEqual(["t1"]);
    // Only the run that ran has a record (read from the store's own file).
    const store = new Database(join(fixture.dataDir, "agents.sqlite"), { readonly: true });
    try {
      expect(store.prepare("select run_id, status from runs").all()).toEqual([
        { run_id: done.runId, status: "success" },
      ]);
    } finally {
      store.close();
    }
  });
});
