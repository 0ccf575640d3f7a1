import type { ToolMessage } from "@langchain/core/messages";
import { expect } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import type { RunEvent, RunResult } from "../../runs/events.js";
import type { RunRequest, Runtime } from "../../runtime.js";

/** Every event of a streamed run, and its result (the run must finish). */
export async function streamRun(
  runtime: Runtime,
  request: RunRequest,
): Promise<{ events: RunEvent[]; result: RunResult }> {
  const events: RunEvent[] = [];
  for await (const event of runtime.stream(request)) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "run_finished") {
    throw new Error(`the run did not finish: last event ${JSON.stringify(last?.type)}`);
  }
  return { events, result: last.result };
}

/**
 * Checks the promise every `task` call keeps: exactly one `subagent_runs` record for call `id`,
 * exactly one `subagent_started` then one `subagent_finished` event for it (naming the same
 * child thread as the record, the finished one carrying the record), and one ToolMessage
 * answering it with the record as artifact. Returns the record and the ToolMessage.
 */
export function expectOneRecordAndEventPair(
  events: readonly RunEvent[],
  result: RunResult,
  id: string,
): { run: SubagentRun; toolMessage: ToolMessage } {
  const records = result.subagentRuns.filter((run) => run.id === id);
  expect(records).toHaveLength(1);
  const run = records[0] as SubagentRun;
  const started = events.filter((event) => event.type === "subagent_started" && event.id === id);
  const finished = events.filter(
    (event) => event.type === "subagent_finished" && event.run.id === id,
  );
  expect(started).toHaveLength(1);
  expect(finished).toHaveLength(1);
  expect(started[0]).toMatchObject({
    subagent_type: run.subagent_type,
    child_thread_id: run.child_thread_id,
  });
  expect(finished[0]).toMatchObject({ run });
  expect(events.indexOf(started[0] as RunEvent)).toBeLessThan(
    events.indexOf(finished[0] as RunEvent),
  );
  const answers = result.messages.filter(
    (message) => message.getType() === "tool" && (message as ToolMessage).tool_call_id === id,
  ) as ToolMessage[];
  expect(answers).toHaveLength(1);
  const toolMessage = answers[0] as ToolMessage;
  expect(toolMessage.artifact).toEqual(run);
  return { run, toolMessage };
}
