import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { expectFailure } from "../agents/helpers.js";
import { mainAgent, openRunsKit, type RunsKit, rowCounts, subagent } from "../runs/kit.js";

const UPLOADS = "/home/gem/user-data/uploads";

describe("createFilesApi", () => {
  let kit: RunsKit | undefined;
  afterEach(async () => {
    await kit?.dispose();
    kit = undefined;
  });

  it("an upload to a new thread id claims it for the user with their default agent", async () => {
    kit = await openRunsKit();
    const helper = await mainAgent(kit, "alice", "helper", "offline", { is_default: true });
    await mainAgent(kit, "alice", "other", "offline");

    const entry = await kit.files.upload("alice", "t1", "notes.txt", "hello");

    expect(entry).toMatchObject({ path: `${UPLOADS}/notes.txt`, size: 5 });
    const row = await kit.store.threads.get("alice", "t1");
    expect(row?.owner_uid).toBe("alice");
    expect(row?.agent_id).toBe(helper.id);
    expect((await kit.files.read("alice", "t1", `${UPLOADS}/notes.txt`)).toString()).toBe("hello");
    expect((await kit.files.list("alice", "t1", UPLOADS)).map((file) => file.path)).toEqual([
      `${UPLOADS}/notes.txt`,
    ]);
  });

  it("a named agent binds the new thread, and an existing thread keeps its agent", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "helper", "offline", { is_default: true });
    const other = await mainAgent(kit, "alice", "other", "offline");

    await kit.files.upload("alice", "t1", "a.txt", "a", { agent: "other" });
    expect((await kit.store.threads.get("alice", "t1"))?.agent_id).toBe(other.id);
    // A second upload to the thread neither re-resolves nor rebinds its agent.
    await kit.files.upload("alice", "t1", "b.txt", "b", { agent: "helper" });
    expect((await kit.store.threads.get("alice", "t1"))?.agent_id).toBe(other.id);
  });

  it("refuses a new thread without a default agent, or for a subagent, writing no thread", async () => {
    kit = await openRunsKit();
    await expectFailure(kit.files.upload("alice", "t1", "a.txt", "a"), ErrorCode.NotFound, "agent");
    await subagent(kit, "alice", "worker", "offline");
    await expectFailure(
      kit.files.upload("alice", "t1", "a.txt", "a", { agent: "worker" }),
      ErrorCode.AgentIsSubagent,
      "agent",
    );
    expect((await rowCounts(kit)).threads).toBe(0);
  });

  it("list, read and upload refuse another user's thread", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "helper", "offline", { is_default: true });
    await mainAgent(kit, "bob", "bobs", "offline", { is_default: true });
    await kit.files.upload("alice", "t1", "secret.txt", "alice only");

    await expectFailure(kit.files.list("bob", "t1", UPLOADS), ErrorCode.NotFound);
    await expectFailure(kit.files.read("bob", "t1", `${UPLOADS}/secret.txt`), ErrorCode.NotFound);
    await expectFailure(kit.files.upload("bob", "t1", "evil.txt", "x"), ErrorCode.NotFound);

    // The thread is still Alice's, with only her file.
    expect((await kit.store.threads.get("alice", "t1"))?.owner_uid).toBe("alice");
    expect((await kit.files.list("alice", "t1", UPLOADS)).map((file) => file.path)).toEqual([
      `${UPLOADS}/secret.txt`,
    ]);
    // A thread nobody has is NOT_FOUND for reads, never created by them.
    await expectFailure(kit.files.list("alice", "t-none"), ErrorCode.NotFound);
    await expectFailure(kit.files.read("alice", "t-none", `${UPLOADS}/x`), ErrorCode.NotFound);
    expect((await rowCounts(kit)).threads).toBe(1);
  });

  it("validates the thread id before anything is written", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "helper", "offline", { is_default: true });
    for (const bad of ["", "../escape", "has space", "-leading", "t1_sub_worker_0123abcd"]) {
      await expectFailure(
        kit.files.upload("alice", bad, "a.txt", "a"),
        ErrorCode.InvalidThreadId,
        "threadId",
      );
    }
    expect((await rowCounts(kit)).threads).toBe(0);
  });

  it("refuses an upload over the size limit, and every call once closed", async () => {
    kit = await openRunsKit({ maxUploadBytes: 4 });
    await mainAgent(kit, "alice", "helper", "offline", { is_default: true });
    await expectFailure(kit.files.upload("alice", "t1", "big.txt", "12345"), ErrorCode.TooLarge);
    await kit.files.upload("alice", "t1", "ok.txt", "1234");

    kit.close();
    await expectFailure(kit.files.upload("alice", "t1", "a.txt", "a"), ErrorCode.Closed);
    await expectFailure(kit.files.list("alice", "t1"), ErrorCode.Closed);
    await expectFailure(kit.files.read("alice", "t1", `${UPLOADS}/ok.txt`), ErrorCode.Closed);
  });
});
