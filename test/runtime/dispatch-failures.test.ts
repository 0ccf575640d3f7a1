import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { mainAgentPayload, SAVER_KINDS, subagentPayload } from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";
import { expectOneRecordAndEventPair, streamRun } from "../support/task-calls.js";
import { runDispatchFailuresSuite } from "./dispatch-failures-suite.js";

for (const saver of SAVER_KINDS) runDispatchFailuresSuite(saver);

/** A store fault needs a hand on the store itself: the SQLite file the runtime keeps agents in. */
describe("a task call whose subagent record cannot be read", () => {
  const harness = new ScriptedHarness("sqlite");
  afterEach(() => harness.dispose());

  it("is recorded failed, naming the subagent, the stored fault and the fix", async () => {
    let researcherId = "";
    const main = harness.model("main", [
      {
        // The allow-list was resolved when the run began; the row goes bad before the call.
        hold: async () => {
          const file = join(harness.fixture?.dataDir ?? "", "agents.sqlite");
          const sqlite = new SQLite(file);
          try {
            sqlite.prepare("UPDATE agents SET config_json = '{' WHERE id = ?").run(researcherId);
          } finally {
            sqlite.close();
          }
        },
        reply: {
          toolCalls: [
            { name: "task", args: { description: "dig", subagent_type: "researcher" }, id: "c1" },
          ],
        },
      },
      { reply: { text: "went on" } },
    ]);
    const runtime = await harness.setup({ "scripted:main": main });
    researcherId = (await runtime.agents.create("alice", subagentPayload("researcher", "offline")))
      .id;
    await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["researcher"]));

    const { events, result } = await streamRun(runtime, {
      uid: "alice",
      agent: "boss",
      input: "go",
    });

    expect(result.output).toBe("went on");
    const message = `subagent "researcher" could not start: agent ${researcherId} is stored corrupt (config_json: not valid JSON): repair or delete its row`;
    const { run, toolMessage } = expectOneRecordAndEventPair(events, result, "c1");
    expect(run).toMatchObject({ status: "failed", child_thread_id: "", error: message });
    expect(toolMessage.content).toBe(message);
    harness.assertScriptsComplete();
  });
});
