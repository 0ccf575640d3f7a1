import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bareEnv, type DevServer, spawnDevServer } from "../support/langgraph-dev.js";
import { namespacesByChildThread, subagentNamespaces } from "../support/subagent-stream.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `npm run studio` for real: the official LangGraph dev server on our `langgraph.json`, driven
 * with the SDK's `Client`. The whole process group is stopped at the end, even on failure.
 * (`studio-no-config.int.test.ts` starts the dev server directly, with nothing configured.)
 */
describe("LangGraph Studio (the official dev server on langgraph.json)", {
  timeout: 90_000,
}, () => {
  let dataDir = "";
  let server: DevServer | undefined;
  let client: Client;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "studio-"));
    server = await spawnDevServer({
      command: process.execPath,
      args: (port) => [
        "--import",
        "tsx",
        "cli/main.ts",
        "studio",
        "--port",
        String(port),
        "--data",
        dataDir,
      ],
      cwd: ROOT,
      env: bareEnv(),
    });
    await server.ready();
    client = server.client;
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("serves the graph `agent`", async () => {
    const assistants = await client.assistants.search({ graphId: "agent" });
    expect(assistants.map((assistant) => assistant.metadata?.created_by)).toContain("system");
  });

  it("runs the demo agent: two subagents on child threads, their events streamed under the tools:<task id> namespace LangGraph gives them", async () => {
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "Compare solar and wind power" }] },
      streamMode: ["values", "updates", "messages-tuple"],
      streamSubgraphs: true,
    })) {
      events.push(part);
    }
    expect(events.filter((e) => e.event === "error")).toEqual([]);

    const state = await client.threads.getState(thread.thread_id);
    const runs = (
      state.values as {
        subagent_runs: { subagent_type: string; status: string; child_thread_id: string }[];
      }
    ).subagent_runs;
    expect(runs.map((run) => [run.subagent_type, run.status])).toEqual([
      ["researcher", "completed"],
      ["reviewer", "completed"],
    ]);
    const byChild = namespacesByChildThread(events);
    for (const run of runs) {
      expect(run.child_thread_id).toMatch(
        new RegExp(`^${thread.thread_id}_sub_${run.subagent_type}_[0-9a-f]{8}$`),
      );
      // The child's tokens and node updates reach the parent's stream under the namespace
      // LangGraph gives a graph run inside a tool (where the official hooks look), never at the
      // root.
      const namespaces = byChild.get(run.child_thread_id) ?? [];
      expect(namespaces).toEqual([expect.stringMatching(/^tools:/)]);
      expect(events.some((e) => e.event === `updates|${namespaces[0]}`)).toBe(true);
    }
    expect(subagentNamespaces(events)).toHaveLength(2);
    const last = (state.values as { messages: { type: string; content: string }[] }).messages.at(
      -1,
    );
    expect(last?.type).toBe("ai");
    expect(last?.content).toContain("[offline model]");

    const history = await client.threads.getHistory(thread.thread_id, { limit: 20 });
    expect(history.length).toBeGreaterThan(2);
    expect(history[0]?.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(history[0]?.parent_checkpoint?.checkpoint_id).toBe(history[1]?.checkpoint.checkpoint_id);
  });

  it("lets the run context narrow the subagents, set limits and pick the user", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "Review my plan" }] },
      context: { uid: "demo", subagents: ["reviewer"] },
    });
    const state = await client.threads.getState(thread.thread_id);
    const runs = (state.values as { subagent_runs: { subagent_type: string }[] }).subagent_runs;
    expect(runs.map((run) => run.subagent_type)).toEqual(["reviewer"]);

    // Limits from the context apply: two task calls in one turn over a cap of one are refused.
    const capped = await client.threads.create();
    await client.runs.wait(capped.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "Compare solar and wind power" }] },
      context: { uid: "demo", max_parallel_subagents: 1 },
    });
    const cappedState = await client.threads.getState(capped.thread_id);
    const cappedRuns = (
      cappedState.values as { subagent_runs: { status: string; error: string }[] }
    ).subagent_runs;
    expect(cappedRuns.map((run) => run.status)).toEqual(["failed", "failed"]);
    expect(cappedRuns[0]?.error).toContain("max_parallel_subagents");

    // A user without agents has nothing to run: the run fails with our NOT_FOUND message.
    const failed = await client.runs
      .wait(thread.thread_id, "agent", {
        input: { messages: [{ type: "human", content: "hi" }] },
        context: { uid: "nobody" },
      })
      .then(
        () => undefined,
        (error: Error) => error,
      );
    expect(String(failed?.message)).toContain("has no default agent");
  });
});
