/**
 * The load scenario's clients, run in a process of their own (forked by `scenarios/load.ts`), so
 * that the server process's CPU time and memory are the service's alone. It answers each
 * {@link LoadCommand} with a {@link LoadReport}; it exits when its parent disconnects.
 */

import { answerParent, type LoadReport } from "./client-process-main.js";
import { percentile } from "./stats.js";
import { msSince, nowNs } from "./timing.js";

export interface LoadCommand {
  base: string;
  /** Several servers (a fleet): client i talks to `bases[i % n]`; default `[base]`. */
  bases?: string[];
  token: string;
  assistantId: string;
  /** The user message of every turn. */
  input: string;
  clients: number;
  /** Conversations each client runs, one after another. */
  conversations: number;
  turns: number;
}

export type { LoadReport };

async function runLevel(command: LoadCommand): Promise<LoadReport> {
  const latencies: number[] = [];
  const errors: string[] = [];
  const start = nowNs();
  await Promise.all(
    Array.from({ length: command.clients }, async (_, client) => {
      const bases = command.bases ?? [command.base];
      const base = bases[client % bases.length] ?? command.base;
      for (let c = 0; c < command.conversations; c += 1) {
        await conversation({ ...command, base }, latencies, errors);
      }
    }),
  );
  return {
    runs: latencies.length,
    latenciesMs: latencies,
    errors,
    wallMs: msSince(start),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/** One conversation: a new thread, then `turns` waited runs, each checked. */
async function conversation(command: LoadCommand, latencies: number[], errors: string[]) {
  const headers = {
    authorization: `Bearer ${command.token}`,
    "content-type": "application/json",
  };
  let threadId: string | undefined;
  try {
    const created = await fetch(`${command.base}/threads`, { method: "POST", headers, body: "{}" });
    threadId = ((await created.json()) as { thread_id?: string }).thread_id;
    if (created.status !== 200 || !threadId) {
      errors.push(`POST /threads: HTTP ${created.status}`);
      return;
    }
  } catch (error) {
    errors.push(`POST /threads: ${String(error)}`);
    return;
  }
  for (let turn = 1; turn <= command.turns; turn += 1) {
    const start = nowNs();
    try {
      const response = await fetch(`${command.base}/threads/${threadId}/runs/wait`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          assistant_id: command.assistantId,
          input: { messages: [{ type: "human", content: command.input }] },
        }),
      });
      const body = (await response.json()) as {
        messages?: { content?: unknown }[];
        subagent_runs?: { status?: string }[];
        __error__?: unknown;
      };
      latencies.push(msSince(start));
      const answer = body.messages?.at(-1)?.content;
      const completed = body.subagent_runs?.filter((run) => run.status === "completed").length;
      if (
        response.status !== 200 ||
        body.__error__ !== undefined ||
        typeof answer !== "string" ||
        !answer.startsWith("done") ||
        completed !== turn
      ) {
        errors.push(
          `turn ${turn}: HTTP ${response.status} ${String(JSON.stringify(body.__error__ ?? answer ?? body)).slice(0, 300)} (${completed} completed children)`,
        );
        return;
      }
    } catch (error) {
      latencies.push(msSince(start));
      errors.push(`turn ${turn}: ${String(error)}`);
      return;
    }
  }
}

answerParent(runLevel);
