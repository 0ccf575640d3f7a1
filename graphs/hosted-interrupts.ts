import { INTERRUPT } from "@langchain/langgraph";

/**
 * How a LangGraph stream yields its chunks, from the options it was started with: with an array
 * of modes `[mode, payload]`, with `subgraphs` also the namespace first `[ns, mode, payload]`.
 * `null`: one mode given as a string, where chunks are bare payloads (Pregel's `invoke` streams
 * that way and merges interrupts itself).
 */
export function chunkShapeOf(options: Record<string, unknown>): { subgraphs: boolean } | null {
  if (!Array.isArray(options.streamMode) || !options.streamMode.includes("values")) return null;
  return { subgraphs: options.subgraphs === true };
}

/** An interrupt as LangGraph streams it. */
interface StreamedInterrupt {
  id?: string;
  value?: unknown;
}

function interruptsIn(payload: unknown): StreamedInterrupt[] | undefined {
  const interrupts = (payload as Record<string, unknown> | null | undefined)?.[INTERRUPT];
  return Array.isArray(interrupts) ? (interrupts as StreamedInterrupt[]) : undefined;
}

/**
 * A root run's stream with its pending interrupts as its last `values` chunk.
 *
 * Why: a LangGraph server answers `runs.wait` (and `runs.join`) with the run's last `values`
 * chunk. LangGraph streams a task's interrupt as a `values` chunk `{ __interrupt__ }` when the
 * task pauses, but when a sibling task of the same step finished (a subagent that answered while
 * another waits for approval), the loop then applies the sibling's writes and streams the state
 * as one more `values` chunk, without the interrupt (`finishAndHandleError` in
 * `@langchain/langgraph`'s `pregel/loop.js`, 1.7.3). Two tasks pausing in one step stream one
 * chunk each, so the last names only one of them. Either way `runs.wait`'s result would miss a
 * pending request that `thread.interrupts` and `getState().tasks` show.
 *
 * So the interrupts streamed at the root (namespace `[]`; a child's, forwarded under its
 * `tools:<task id>` namespace, are not the run's) are gathered, and when the last root `values` chunk
 * does not name them all, one more `values` chunk `{ __interrupt__: [all of them] }` is added:
 * the shape LangGraph itself streams for an interrupt, which the SDK's `useStream` merges into
 * the values it holds. A stream that never paused is passed on unchanged.
 * `test/studio/studio-approvals.int.test.ts` fails if this is missing.
 */
export async function* withInterruptsLast(
  chunks: AsyncIterable<unknown>,
  shape: { subgraphs: boolean },
): AsyncGenerator<unknown> {
  const pending = new Map<string, StreamedInterrupt>();
  let lastValues = new Set<string>();
  for await (const chunk of chunks) {
    yield chunk;
    if (!Array.isArray(chunk)) continue;
    const [namespace, mode, payload] = shape.subgraphs ? chunk : [[], ...chunk];
    if (!Array.isArray(namespace) || namespace.length > 0) continue;
    if (mode !== "values" && mode !== "updates") continue;
    const interrupts = interruptsIn(payload) ?? [];
    for (const [index, interrupt] of interrupts.entries()) {
      pending.set(interrupt.id ?? `${pending.size}:${index}`, interrupt);
    }
    if (mode === "values") {
      lastValues = new Set(interrupts.map((interrupt) => interrupt.id ?? ""));
    }
  }
  if (pending.size === 0 || [...pending.keys()].every((id) => lastValues.has(id))) return;
  const last = { [INTERRUPT]: [...pending.values()] };
  yield shape.subgraphs ? [[], "values", last] : ["values", last];
}
