/**
 * A runtime in its own process, for the crash-durability test: it delegates to two subagents
 * and is meant to be killed (SIGKILL) while one of them is still running.
 *
 *   node --import tsx test/support/durable-worker.ts <dataDir> <threadId>
 *
 * with OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MAX_RETRIES=0 pointing at a fake server that
 * answers `boss-model`, `fast-model` and `slow-model`. Checkpoints go to
 * `<dataDir>/checkpoints.sqlite` (the default saver), where a later runtime resumes them.
 */
import { createRuntime, type Runtime } from "../../runtime.js";
import { mainAgentPayload, subagentPayload } from "./runtime-fixture.js";

/** Creates alice's subagents "fast" and "slow" and her main agent "boss", unless present. */
async function ensureDurableAgents(runtime: Runtime): Promise<void> {
  const existing = new Set(
    (await runtime.agents.list("alice", { include_subagents: true })).map((agent) => agent.slug),
  );
  for (const slug of ["fast", "slow"]) {
    if (!existing.has(slug)) {
      await runtime.agents.create("alice", subagentPayload(slug, `openai:${slug}-model`));
    }
  }
  if (!existing.has("boss")) {
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:boss-model", ["fast", "slow"]),
    );
  }
}

async function main(dataDir: string, threadId: string): Promise<void> {
  const runtime = await createRuntime({ dataDir, env: process.env });
  await ensureDurableAgents(runtime);
  console.log(`agents ready in ${dataDir}`);
  console.log(`run starting on thread ${threadId}`);
  const result = await runtime.run({
    uid: "alice",
    agent: "boss",
    threadId,
    input: "research both",
  });
  console.log(`run finished: ${JSON.stringify(result.output)}`);
  await runtime.close();
}

const [dataDir, threadId] = process.argv.slice(2);
if (dataDir === undefined || threadId === undefined) {
  console.error("usage: node --import tsx test/support/durable-worker.ts <dataDir> <threadId>");
  process.exitCode = 2;
} else {
  main(dataDir, threadId).catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  });
}
