/**
 * The cpu scenario's clients (`scenarios/cpu.ts`), run in a process of their own (forked through
 * `load-client-process.ts`) so that a server's CPU time and memory are the server's alone. They
 * drive a server through the official SDK (`@langchain/langgraph-sdk`'s `Client`), as an app
 * does: each conversation is a new thread and two delegating turns, the first through
 * `runs.wait`, the second through `runs.stream` with the stream modes of the SDK's `useStream`
 * (subgraphs included, as a chat UI that shows subagents asks). Every run is checked: the main
 * agent's final text, and one answer from each subagent after the turn's two parallel `task`
 * calls. It answers each {@link CpuLoadCommand} with a {@link LoadReport}; it exits when its
 * parent disconnects.
 */
import { Client } from "@langchain/langgraph-sdk";
import { answerParent } from "./client-process-main.js";
import type { LoadReport } from "./load-client.js";
import { percentile } from "./stats.js";
import { LEGACY_MODES } from "./streaming-clients.js";
import { msSince, nowNs } from "./timing.js";
import { answerText, DELEGATE, MAIN_LABEL } from "./token-model-server.js";

export interface CpuLoadCommand {
  /** The server's processes: client i talks to `bases[i % n]` (a fleet: several). */
  bases: string[];
  /** The bearer token (ours), or null (the dev server has no auth). */
  apiKey: string | null;
  assistantId: string;
  clients: number;
  /** Conversations each client runs, one after another (2 runs each). */
  conversations: number;
  /** Words in every model answer (the model's `tokens=<n>`). */
  tokens: number;
  /** The subagents each delegating turn calls (one answer from each is expected). */
  subagents: string[];
}

interface WireMessage {
  type?: string;
  content?: unknown;
  tool_calls?: unknown[];
}

/** Why a run's final state is not the expected one; undefined when it is. */
export function checkTurn(values: unknown, command: CpuLoadCommand): string | undefined {
  const messages = (values as { messages?: WireMessage[] } | undefined)?.messages ?? [];
  const lastHuman = messages.findLastIndex((message) => message.type === "human");
  const turn = messages.slice(lastHuman + 1);
  const text = (message: WireMessage | undefined) =>
    typeof message?.content === "string" ? message.content.trim() : JSON.stringify(message);
  const final = text(turn.at(-1));
  if (final !== answerText(MAIN_LABEL, command.tokens).trim()) {
    return `final message ${final.slice(0, 120)}`;
  }
  const calls = turn.find((message) => message.type === "ai")?.tool_calls?.length ?? 0;
  const answers = new Set(turn.filter((m) => m.type === "tool").map((m) => text(m)));
  const missing = command.subagents.filter(
    (slug) => !answers.has(answerText(slug, command.tokens).trim()),
  );
  if (calls !== command.subagents.length || missing.length > 0) {
    return `${calls} task calls in one message; no answer from ${missing.join(", ") || "-"}`;
  }
  return undefined;
}

/** One simulated user: its own SDK client, its conversations one after another. */
async function user(
  command: CpuLoadCommand,
  base: string,
  latencies: number[],
  errors: string[],
): Promise<void> {
  // One Client per user, as each browser has its own; the SDK's retries are off, so a failed
  // request is counted, not hidden (its default retries 4 times).
  const client = new Client({
    apiUrl: base,
    apiKey: command.apiKey,
    callerOptions: { maxRetries: 0 },
  });
  const input = { messages: [{ type: "human", content: `${DELEGATE} tokens=${command.tokens}` }] };
  for (let c = 0; c < command.conversations; c += 1) {
    let threadId: string;
    try {
      threadId = (await client.threads.create()).thread_id;
    } catch (error) {
      errors.push(`threads.create: ${String(error)}`);
      continue;
    }
    let start = nowNs();
    try {
      const values = await client.runs.wait(threadId, command.assistantId, {
        input,
        raiseError: false,
      });
      latencies.push(msSince(start));
      const problem = checkTurn(values, command);
      if (problem) {
        errors.push(`runs.wait: ${problem}`);
        continue;
      }
    } catch (error) {
      latencies.push(msSince(start));
      errors.push(`runs.wait: ${String(error)}`);
      continue;
    }
    start = nowNs();
    try {
      let values: unknown;
      let failure: string | undefined;
      for await (const part of client.runs.stream(threadId, command.assistantId, {
        input,
        streamMode: [...LEGACY_MODES],
        streamSubgraphs: true,
      })) {
        // The root graph's state (a subagent's comes as `values|tools:<id>`).
        if (part.event === "values") values = part.data;
        if (part.event === "error") failure ??= JSON.stringify(part.data).slice(0, 200);
      }
      latencies.push(msSince(start));
      const problem = failure ?? checkTurn(values, command);
      if (problem) errors.push(`runs.stream: ${problem}`);
    } catch (error) {
      latencies.push(msSince(start));
      errors.push(`runs.stream: ${String(error)}`);
    }
  }
}

/** Runs `clients` users at once; resolves when every conversation is over. */
async function runLevel(command: CpuLoadCommand): Promise<LoadReport> {
  const latencies: number[] = [];
  const errors: string[] = [];
  const start = nowNs();
  await Promise.all(
    Array.from({ length: command.clients }, (_, i) =>
      user(command, command.bases[i % command.bases.length] ?? "", latencies, errors),
    ),
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

answerParent(runLevel);
