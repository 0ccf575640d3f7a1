/**
 * The approvals scenario's turn (`scenarios/approvals.ts`), the same for ours and Deep Agents:
 * the main agent delegates to `writer` and `reader` in one model turn (two parallel `task`
 * calls). The writer looks something up, then calls `note`, which is gated (or not, in the
 * ungated turn), then answers; the reader looks something up, then answers; the main agent
 * answers once both results are in. Every model request and tool execution is counted, by
 * agent and tool, so the resume's work can be told from work done again.
 */
import { randomUUID } from "node:crypto";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import type { PendingApproval } from "../../middleware/approval-request.js";
import { subagentPayload } from "../../test/support/runtime-fixture.js";
import { messageText } from "../../util/message-text.js";
import { type BenchCall, BenchModel, type BenchReply } from "./model.js";
import {
  createBenchAgents,
  createDeepSystem,
  MAIN_SLUG,
  type OurSystem,
  openOurs,
  type SaverName,
  UID,
} from "./systems.js";

/** The user message of the turn. */
export const TURN_INPUT = "delegate the note and the reading";
/** What the main agent answers once both results are in. */
export const FINAL_ANSWER = "done: wrote it; read it";
/** The gated tool. */
export const GATED_TOOL = "note";
/** The resume value: approve the one pending call (langchain's `HITLResponse`). */
export const APPROVE = { decisions: [{ type: "approve" as const }] };

/** What one agent turn did: model requests by agent, tool executions by tool and caller. */
export interface Counts {
  main: number;
  writer: number;
  reader: number;
  /** `lookup` as the writer called it. */
  writerLookup: number;
  /** `lookup` as the reader called it. */
  readerLookup: number;
  note: number;
}

export function zeroCounts(): Counts {
  return { main: 0, writer: 0, reader: 0, writerLookup: 0, readerLookup: 0, note: 0 };
}

export function diffCounts(after: Counts, before: Counts): Counts {
  const diff = zeroCounts();
  for (const key of Object.keys(diff) as (keyof Counts)[]) diff[key] = after[key] - before[key];
  return diff;
}

/** What a whole turn does once: the ungated turn's counts, and the paused plus resumed run's. */
export const TURN_COUNTS: Counts = {
  main: 2,
  writer: 3,
  reader: 2,
  writerLookup: 1,
  readerLookup: 1,
  note: 1,
};

/**
 * What only the resume has to do: the approved `note`, the writer's answer and the main agent's
 * answer. Everything else it runs was finished before the pause.
 */
export const RESUME_COUNTS: Counts = {
  main: 1,
  writer: 1,
  reader: 0,
  writerLookup: 0,
  readerLookup: 0,
  note: 1,
};

/** Finished calls the resume ran again: what it did beyond {@link RESUME_COUNTS}. */
export function reExecuted(resume: Counts): number {
  return (Object.keys(RESUME_COUNTS) as (keyof Counts)[]).reduce(
    (sum, key) => sum + Math.max(0, resume[key] - RESUME_COUNTS[key]),
    0,
  );
}

export function modelRequests(counts: Counts): number {
  return counts.main + counts.writer + counts.reader;
}

export function toolExecutions(counts: Counts): number {
  return counts.writerLookup + counts.readerLookup + counts.note;
}

/** The turn's models and tools, counting into `counts`, each model call after `latencyMs`. */
export function approvalsKit(counts: Counts, latencyMs: number) {
  const toolResults = (call: BenchCall) =>
    call.messages.filter((message) => message.getType() === "tool").length;
  const options = { latencyMs };
  const main = new BenchModel(
    "main",
    (call): BenchReply => {
      counts.main += 1;
      if (call.messages.at(-1)?.getType() === "human") {
        return {
          toolCalls: [
            { name: "task", args: { description: "write a note", subagent_type: "writer" } },
            { name: "task", args: { description: "read something", subagent_type: "reader" } },
          ],
        };
      }
      const answers = call.messages.filter((message) => message.getType() === "tool");
      return { text: answers.length === 2 ? FINAL_ANSWER : `only ${answers.length} results` };
    },
    options,
  );
  const writer = new BenchModel(
    "writer",
    (call): BenchReply => {
      counts.writer += 1;
      const done = toolResults(call);
      if (done === 0) return { toolCalls: [{ name: "lookup", args: { text: "writer" } }] };
      if (done === 1) return { toolCalls: [{ name: GATED_TOOL, args: { text: "from writer" } }] };
      return { text: "wrote it" };
    },
    options,
  );
  const reader = new BenchModel(
    "reader",
    (call): BenchReply => {
      counts.reader += 1;
      if (toolResults(call) === 0) {
        return { toolCalls: [{ name: "lookup", args: { text: "reader" } }] };
      }
      return { text: "read it" };
    },
    options,
  );
  const lookup = tool(
    async ({ text }: { text: string }) => {
      if (text === "writer") counts.writerLookup += 1;
      else counts.readerLookup += 1;
      return `looked up for ${text}`;
    },
    { name: "lookup", description: "Looks something up.", schema: z.object({ text: z.string() }) },
  );
  const note = tool(
    async ({ text }: { text: string }) => {
      counts.note += 1;
      return `noted: ${text}`;
    },
    { name: GATED_TOOL, description: "Writes a note.", schema: z.object({ text: z.string() }) },
  );
  return { main, writer, reader, lookup, note };
}

/** One system's way through the turn: gated (pause, then resume) or ungated (one run). */
export interface ApprovalsSystem {
  counts: Counts;
  /** The gated turn's first run on a fresh thread: the pending requests it ends with. */
  pause(threadId: string): Promise<PendingApproval[]>;
  /** Resumes `threadId` with {@link APPROVE}: the final answer and what is still pending. */
  resume(threadId: string): Promise<{ output: string; pending: number }>;
  /** The same turn without a gate, on a fresh thread: the final answer. */
  ungated(threadId: string): Promise<string>;
  dispose(): Promise<void>;
}

/** The user whose writer has no gate (ours): same agents, same names, same runtime. */
const UNGATED_UID = "bench-ungated";

/**
 * Ours: one runtime on `saver`, `UID`'s writer gating `note` (`interrupt_on` on its record),
 * `UNGATED_UID`'s the same agents without it. Undefined when the saver is not installed.
 */
export async function openOursApprovals(
  saver: SaverName,
  latencyMs: number,
): Promise<(ApprovalsSystem & { system: OurSystem }) | undefined> {
  const counts = zeroCounts();
  const kit = approvalsKit(counts, latencyMs);
  const subagents = (gated: boolean) => [
    {
      slug: "writer",
      model: "bench:writer",
      context: {
        tools: ["lookup", GATED_TOOL],
        ...(gated ? { interrupt_on: { [GATED_TOOL]: true } } : {}),
      },
    },
    { slug: "reader", model: "bench:reader", context: { tools: ["lookup"] } },
  ];
  const system = await openOurs({
    saver,
    mainModel: kit.main,
    childModel: kit.writer,
    models: { "bench:writer": kit.writer, "bench:reader": kit.reader },
    tools: [kit.lookup, kit.note],
    subagents: subagents(true),
  });
  if (!system) return undefined;
  const { runtime } = system;
  await createBenchAgents(runtime, UNGATED_UID, subagents(false), { tools: [] });
  return {
    system,
    counts,
    async pause(threadId) {
      const result = await runtime.run({ uid: UID, agent: MAIN_SLUG, threadId, input: TURN_INPUT });
      return result.interrupts;
    },
    async resume(threadId) {
      const result = await runtime.run({ uid: UID, threadId, command: { resume: APPROVE } });
      return { output: result.output, pending: result.interrupts.length };
    },
    async ungated(threadId) {
      const result = await runtime.run({
        uid: UNGATED_UID,
        agent: MAIN_SLUG,
        threadId,
        input: TURN_INPUT,
      });
      return result.output;
    },
    dispose: () => system.dispose(),
  };
}

/**
 * Deep Agents 1.14.1 on `saver`: `createDeepAgent` with the same main model and prompt and the
 * same two subagents, the writer with `interruptOn: { note: true }`; the ungated agent without
 * it. Paused as its README shows (`invoke` returns `__interrupt__`), resumed with LangGraph's
 * `Command({ resume })` carrying langchain's decisions.
 */
export function deepApprovals(saver: BaseCheckpointSaver, latencyMs: number): ApprovalsSystem {
  const counts = zeroCounts();
  const kit = approvalsKit(counts, latencyMs);
  const build = (gated: boolean) =>
    createDeepSystem(kit.main, saver, [
      {
        name: "writer",
        description: subagentPayload("writer", "x").description,
        systemPrompt: "You are writer.",
        tools: [kit.lookup, kit.note],
        model: kit.writer,
        ...(gated ? { interruptOn: { [GATED_TOOL]: true } } : {}),
      },
      {
        name: "reader",
        description: subagentPayload("reader", "x").description,
        systemPrompt: "You are reader.",
        tools: [kit.lookup],
        model: kit.reader,
      },
    ]);
  const gatedAgent = build(true);
  const ungatedAgent = build(false);
  const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
  const lastText = (messages: BaseMessage[]) => {
    const last = messages.at(-1);
    return last ? messageText(last) : "";
  };
  return {
    counts,
    async pause(threadId) {
      const result = (await gatedAgent.invoke(
        { messages: [new HumanMessage(TURN_INPUT)] },
        config(threadId),
      )) as { __interrupt__?: PendingApproval[] };
      return result.__interrupt__ ?? [];
    },
    async resume(threadId) {
      const result = (await gatedAgent.invoke(
        new Command({ resume: APPROVE }),
        config(threadId),
      )) as { messages: BaseMessage[]; __interrupt__?: unknown[] };
      return { output: lastText(result.messages), pending: result.__interrupt__?.length ?? 0 };
    },
    async ungated(threadId) {
      const result = await ungatedAgent.invoke(
        { messages: [new HumanMessage(TURN_INPUT)] },
        config(threadId),
      );
      return lastText(result.messages);
    },
    dispose: async () => {},
  };
}

/** A fresh thread id for one turn of `system`. */
export function freshThread(system: string): string {
  return `${system}-${randomUUID()}`;
}
