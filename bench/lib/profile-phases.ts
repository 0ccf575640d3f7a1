/**
 * Where a server's CPU goes by phase of a run (HTTP, run preparation and records, graph steps,
 * checkpoints, the model's client, stream events, the run registry), from a V8 CPU profile:
 * what issue 42 asked to be profiled before anything was cut. Each sample goes to the first
 * phase, in the order of {@link PHASES}, that a frame of its stack belongs to, the leaf first:
 * a checkpoint write inside a graph step counts as a checkpoint write, JSON parsing inside a
 * route as HTTP. Stacks are synchronous (an `await` cuts them), so work resumed after an await
 * counts by the frames it resumed in; what no frame names (GC, the microtask loop, idle) is
 * shown apart.
 */
import type { CpuProfile } from "./profile-summary.js";

/** A phase and the frames that belong to it (tested on `url` then on `function url`). */
interface Phase {
  name: string;
  frames: RegExp;
}

/** In priority order: the first that matches a frame on the stack, leaf first, wins. */
const PHASES: readonly Phase[] = [
  {
    name: "checkpoint writes and reads (savers, serializer, delta reads, Send refs)",
    frames:
      /langgraph-checkpoint|\/checkpoints\/|better-sqlite3.*saver|serde|_putCheckpoint|putWrites|getTuple/,
  },
  {
    name: "stream events: serialization and SSE (server/protocol)",
    frames: /\/server\/protocol\/|\/server\/thread-protocol\//,
  },
  {
    name: "run registry and event log (server/live-runs, runs/run-event-log)",
    frames: /\/server\/live-runs\/|run-event-log|run-events/,
  },
  {
    name: "run preparation and records (runs/, store/, kysely, better-sqlite3)",
    frames: /\/runs\/|\/store\/|kysely|better-sqlite3/,
  },
  {
    name: "the model's client (openai, @langchain/openai, fetch/undici)",
    frames: /node_modules\/openai\/|@langchain\/openai|undici|fetch/,
  },
  {
    name: "graph steps (LangGraph, langchain's agent, middleware, tools, callbacks)",
    frames:
      /@langchain\/langgraph\/|node_modules\/langchain\/|@langchain\/core|langsmith|\/middleware\/|\/graphs\/|\/backends\/|zod/,
  },
  {
    name: "HTTP: parsing, validation, routing, auth (fastify, node:http, server/)",
    frames: /fastify|find-my-way|_http_|node:http|\/server\//,
  },
];

const GC = "(garbage collector)";

/** Self time by phase, as text lines (share of all samples in `window`, if given). */
export function phaseLines(
  profile: CpuProfile,
  window?: { fromUs: number; toUs: number },
): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const phaseOfNode = new Map<number, string>();
  const phaseOf = (id: number): string => {
    const known = phaseOfNode.get(id);
    if (known !== undefined) return known;
    let found: string | undefined;
    const stack: number[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(at);
    for (const phase of PHASES) {
      if (
        stack.some((frameId) => {
          const frame = byId.get(frameId)?.callFrame;
          return frame !== undefined && phase.frames.test(`${frame.functionName} ${frame.url}`);
        })
      ) {
        found = phase.name;
        break;
      }
    }
    const leaf = byId.get(id)?.callFrame.functionName ?? "";
    const name =
      found ??
      (leaf === GC
        ? "garbage collection"
        : leaf === "(idle)"
          ? "idle"
          : "other (microtask loop, timers, Node's own)");
    phaseOfNode.set(id, name);
    return name;
  };
  const totals = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  for (const [i, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    const name = phaseOf(id);
    totals.set(name, (totals.get(name) ?? 0) + delta);
    total += delta;
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}
