/**
 * What the streaming scenario (`scenarios/streaming.ts`) measures, per server and protocol, all
 * through the official SDK (`@langchain/langgraph-sdk` 1.15.0) as a frontend uses it:
 * - legacy: `client.runs.stream` (one request starts the run and streams it) and
 *   `client.runs.joinStream` (subscribers of a run someone else started);
 * - v2: `client.threads.stream(threadId, { assistantId })`, a `ThreadStream` on the SSE
 *   transport, `subscribe(channels)` before the run and `submitRun` to start it.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { SUBAGENT_NAMESPACE_PREFIX } from "../../contract.js";
import type { StreamTarget } from "./streaming-servers.js";
import { msSince, nowNs } from "./timing.js";

export type Protocol = "legacy" | "v2";

/** The legacy stream modes a frontend asks for (`useStream` of the SDK's react entry). */
export const LEGACY_MODES = ["values", "updates", "messages-tuple", "custom"] as const;
/** The v2 channels subscribed: the same content, plus the lifecycle that tells the run's end. */
export const V2_CHANNELS = [
  "values",
  "updates",
  "messages",
  "custom",
  "tools",
  "lifecycle",
] as const;

/** One subscriber's view of one run. */
export interface Delivery {
  /** Events received. */
  events: number;
  /** Of those, text tokens of any agent (a non-empty text chunk / `text-delta`). */
  tokens: number;
  /** From the request that started the run to this subscriber's end of the run, in ms. */
  endMs: number;
  /** From the start request to the main agent's first text token, in ms (NaN: none). */
  firstTokenMs: number;
  /** From the start request to the last text token of any agent, in ms (NaN: none). */
  lastTokenMs: number;
  /** An `error` event or a failed run, if any. */
  error?: string;
}

const emptyDelivery = (): Delivery => ({
  events: 0,
  tokens: 0,
  endMs: Number.NaN,
  firstTokenMs: Number.NaN,
  lastTokenMs: Number.NaN,
});

const input = (text: string) => ({ messages: [{ type: "human", content: text }] });

/** Whether a namespace (legacy `a|b` suffix split, or v2 array) is inside a subagent. */
function inSubagent(namespace: readonly string[]): boolean {
  return namespace.some((part) => part.startsWith(SUBAGENT_NAMESPACE_PREFIX));
}

/** The text of a legacy `messages` (messages-tuple) event's AI chunk ("" when none). */
function legacyChunkText(data: unknown): string {
  const chunk = Array.isArray(data)
    ? (data[0] as { content?: unknown; type?: string } | undefined)
    : undefined;
  // A tool's result (the subagent's answer as the `task` call's message) is not a token.
  if (chunk?.type === "tool" || chunk?.type === "human") return "";
  const content = chunk?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((block) => (typeof block?.text === "string" ? (block.text as string) : ""))
      .join("");
  }
  return "";
}

/** Accumulates one legacy subscriber's events. */
function legacyReader(start: bigint) {
  const delivery = emptyDelivery();
  return {
    delivery,
    take(part: { event: string; data: unknown }) {
      delivery.events += 1;
      const [mode = "", ...namespace] = part.event.split("|");
      if (mode === "error") delivery.error ??= JSON.stringify(part.data).slice(0, 200);
      if (mode === "messages" && legacyChunkText(part.data) !== "") {
        delivery.tokens += 1;
        delivery.lastTokenMs = msSince(start);
        if (!inSubagent(namespace) && Number.isNaN(delivery.firstTokenMs)) {
          delivery.firstTokenMs = delivery.lastTokenMs;
        }
      }
    },
    end() {
      delivery.endMs = msSince(start);
      return delivery;
    },
  };
}

interface V2Event {
  method: string;
  params: {
    namespace: string[];
    data: { event?: string; delta?: { type?: string; text?: string }; error?: unknown };
  };
}

const isRootEnd = (event: V2Event) =>
  event.method === "lifecycle" &&
  event.params.namespace.length === 0 &&
  ["completed", "failed", "interrupted"].includes(event.params.data.event ?? "");

/** Reads a v2 subscription until the root's lifecycle ends the run. */
async function readV2(subscription: AsyncIterable<unknown>, start: bigint): Promise<Delivery> {
  const delivery = emptyDelivery();
  for await (const raw of subscription) {
    const event = raw as V2Event;
    delivery.events += 1;
    const { data, namespace } = event.params;
    if (
      event.method === "messages" &&
      data.event === "content-block-delta" &&
      data.delta?.type === "text-delta" &&
      (data.delta.text ?? "") !== ""
    ) {
      delivery.tokens += 1;
      delivery.lastTokenMs = msSince(start);
      if (!inSubagent(namespace) && Number.isNaN(delivery.firstTokenMs)) {
        delivery.firstTokenMs = delivery.lastTokenMs;
      }
    }
    if (isRootEnd(event)) {
      if (data.event !== "completed") delivery.error ??= `run ${data.event}`;
      break;
    }
  }
  delivery.endMs = msSince(start);
  return delivery;
}

/** One run on a fresh thread, one client: the start request streams it (legacy `runs.stream`). */
export async function legacyRun(target: StreamTarget, text: string): Promise<Delivery> {
  const thread = await target.client.threads.create();
  const start = nowNs();
  const reader = legacyReader(start);
  for await (const part of target.client.runs.stream(thread.thread_id, target.assistantId, {
    input: input(text),
    streamMode: [...LEGACY_MODES],
    streamSubgraphs: true,
  })) {
    reader.take(part);
  }
  return reader.end();
}

/**
 * One run on a fresh thread, one client: a `ThreadStream` subscribed to {@link V2_CHANNELS}
 * (opened before the clock starts, as a page has its thread open), then `submitRun`.
 */
export async function v2Run(target: StreamTarget, text: string): Promise<Delivery> {
  const thread = await target.client.threads.create();
  const stream = target.client.threads.stream(thread.thread_id, {
    assistantId: target.assistantId,
  });
  try {
    const subscription = await stream.subscribe([...V2_CHANNELS]);
    const start = nowNs();
    const reading = readV2(subscription, start);
    await stream.submitRun({ input: input(text) });
    return await reading;
  } finally {
    await stream.close();
  }
}

/**
 * One run on a fresh thread followed by `subscribers` clients at once. Legacy: the run is
 * created (`runs.create`, resumable) and each subscriber joins it (`runs.joinStream` with
 * `lastEventId: "-1"`, so one that joins after the first events still gets the whole run). v2:
 * each subscriber is a `ThreadStream` of its own subscribed before the run, which one more
 * `ThreadStream` starts.
 */
export async function fanOut(
  target: StreamTarget,
  protocol: Protocol,
  subscribers: number,
  text: string,
): Promise<Delivery[]> {
  const { client } = target;
  const thread = await client.threads.create();
  if (protocol === "legacy")
    return legacyFanOut(client, target, thread.thread_id, subscribers, text);
  const streams = Array.from({ length: subscribers + 1 }, () =>
    client.threads.stream(thread.thread_id, { assistantId: target.assistantId }),
  );
  try {
    const subscriptions = await Promise.all(
      streams.slice(1).map((stream) => stream.subscribe([...V2_CHANNELS])),
    );
    const start = nowNs();
    const readings = subscriptions.map((subscription) => readV2(subscription, start));
    await streams[0]?.submitRun({ input: input(text) });
    return await Promise.all(readings);
  } finally {
    await Promise.all(streams.map((stream) => stream.close()));
  }
}

async function legacyFanOut(
  client: Client,
  target: StreamTarget,
  threadId: string,
  subscribers: number,
  text: string,
): Promise<Delivery[]> {
  const start = nowNs();
  const run = await client.runs.create(threadId, target.assistantId, {
    input: input(text),
    streamMode: [...LEGACY_MODES],
    streamSubgraphs: true,
    streamResumable: true,
  });
  return Promise.all(
    Array.from({ length: subscribers }, async () => {
      const reader = legacyReader(start);
      for await (const part of client.runs.joinStream(threadId, run.run_id, {
        lastEventId: "-1",
        streamMode: [...LEGACY_MODES],
      })) {
        reader.take(part);
      }
      return reader.end();
    }),
  );
}
