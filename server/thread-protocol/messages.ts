import { messageOf } from "../../errors.js";
import type { UnnumberedEvent } from "./wire.js";

/**
 * Turns the token chunks our runs stream (`messages` events: a serialised message chunk and its
 * metadata, `server/protocol/translate.ts`) into the protocol's content-block events, as
 * LangGraph's own v3 stream writes them (see the fixtures in `test/fixtures/protocol-v2/`):
 * `message-start`, then per block `content-block-start` and its deltas (`text-delta`,
 * `tool-call-delta`), and once the message is whole, every block's `content-block-finish` and a
 * `message-finish` with the usage.
 *
 * The chunks do not say when a message is over, so a message finishes when the node that made
 * it reports it (an `updates` event holding an AI message with its id: {@link finishById}), when
 * a new message starts in the same namespace, or when the run ends ({@link finishAll}).
 */
export class MessageAssembler {
  /** Open messages by the key of their namespace. */
  private readonly open = new Map<string, OpenMessage>();

  /** The events of one chunk (none for a message that is not an AI message). */
  chunk(eventNamespace: string[], message: unknown, metadata: unknown): UnnumberedEvent[] {
    if (!isRecord(message) || message.type !== "ai") return [];
    const namespace = messageNamespace(eventNamespace, metadata);
    const key = namespace.join("|");
    const events: UnnumberedEvent[] = [];
    const id = typeof message.id === "string" && message.id ? message.id : undefined;
    let open = this.open.get(key);
    if (open && id !== undefined && open.id !== id) {
      events.push(...this.finish(open));
      open = undefined;
    }
    if (!open) {
      open = {
        id: id ?? `message-${namespace.join("|")}-${Date.now()}`,
        namespace,
        graphNamespace:
          metadata && isRecord(metadata) && typeof metadata.langgraph_checkpoint_ns === "string"
            ? namespace.slice(0, -1)
            : namespace,
        blocks: [],
        usage: undefined,
        reason: undefined,
      };
      this.open.set(key, open);
      events.push(this.event(open, { event: "message-start", role: "ai", id: open.id }));
    }
    for (const text of textsOf(message.content)) events.push(...this.text(open, text));
    const chunks = Array.isArray(message.tool_call_chunks) ? message.tool_call_chunks : [];
    if (chunks.length > 0) {
      for (const chunk of chunks) if (isRecord(chunk)) events.push(...this.toolChunk(open, chunk));
    } else if (Array.isArray(message.tool_calls)) {
      // A message that came whole (a model that does not stream): its calls at once.
      for (const call of message.tool_calls) {
        if (!isRecord(call)) continue;
        events.push(
          ...this.toolChunk(open, {
            id: call.id,
            name: call.name,
            args: JSON.stringify(call.args ?? {}),
          }),
        );
      }
    }
    if (isRecord(message.usage_metadata)) open.usage = message.usage_metadata;
    const reason = isRecord(message.response_metadata)
      ? message.response_metadata.finish_reason
      : undefined;
    if (typeof reason === "string") open.reason = reason;
    return events;
  }

  /**
   * Finishes the open message `id`, if any, with the calls of its final form (`final`, the AI
   * message a node reported), whose parsed arguments are exact.
   * @returns its events, and the calls it made with their namespace, for the tools channel
   */
  finishById(id: string, final?: Record<string, unknown>): UnnumberedEvent[] {
    for (const open of this.open.values()) {
      if (open.id === id) return this.finish(open, final);
    }
    return [];
  }

  /** Finishes every open message (the run ended). */
  finishAll(): UnnumberedEvent[] {
    return [...this.open.values()].flatMap((open) => this.finish(open));
  }

  /** The namespace of the graph the open message `id` was made in (its model call's parent). */
  graphNamespaceOf(id: string): string[] | undefined {
    for (const open of this.open.values()) if (open.id === id) return open.graphNamespace;
    return undefined;
  }

  private text(open: OpenMessage, text: string): UnnumberedEvent[] {
    const events: UnnumberedEvent[] = [];
    let block = open.blocks.at(-1);
    if (block?.kind !== "text") {
      block = { kind: "text", index: open.blocks.length, text: "", args: "" };
      open.blocks.push(block);
      events.push(
        this.event(open, {
          event: "content-block-start",
          index: block.index,
          content: { type: "text", text: "" },
        }),
      );
    }
    block.text += text;
    events.push(
      this.event(open, {
        event: "content-block-delta",
        index: block.index,
        delta: { type: "text-delta", text },
      }),
    );
    return events;
  }

  private toolChunk(open: OpenMessage, chunk: Record<string, unknown>): UnnumberedEvent[] {
    const events: UnnumberedEvent[] = [];
    const id = typeof chunk.id === "string" && chunk.id ? chunk.id : undefined;
    const position = typeof chunk.index === "number" ? chunk.index : undefined;
    const tools = open.blocks.filter((block) => block.kind === "tool");
    let block =
      (id !== undefined ? tools.find((candidate) => candidate.id === id) : undefined) ??
      (id === undefined && position !== undefined
        ? tools.find((candidate) => candidate.position === position)
        : undefined) ??
      (id === undefined ? tools.at(-1) : undefined);
    if (!block) {
      const name = typeof chunk.name === "string" ? chunk.name : "";
      block = {
        kind: "tool",
        index: open.blocks.length,
        text: "",
        args: "",
        id: id ?? `${open.id}-call-${open.blocks.length}`,
        name,
        position,
      };
      open.blocks.push(block);
      events.push(
        this.event(open, {
          event: "content-block-start",
          index: block.index,
          content: { type: "tool_call_chunk", id: block.id, name, args: "", index: block.index },
        }),
      );
    }
    if (typeof chunk.name === "string" && chunk.name && !block.name) block.name = chunk.name;
    const args = typeof chunk.args === "string" ? chunk.args : "";
    if (args) {
      block.args += args;
      events.push(
        this.event(open, {
          event: "content-block-delta",
          index: block.index,
          delta: { type: "tool-call-delta", args },
        }),
      );
    }
    return events;
  }

  private finish(open: OpenMessage, final?: Record<string, unknown>): UnnumberedEvent[] {
    this.open.delete(open.namespace.join("|"));
    const finalCalls = new Map<string, Record<string, unknown>>();
    for (const call of Array.isArray(final?.tool_calls) ? final.tool_calls : []) {
      if (isRecord(call) && typeof call.id === "string") finalCalls.set(call.id, call);
    }
    // Calls the node reported that never streamed (a model that sends them only at its end):
    // their blocks now, so that the message holds every call it made.
    const events: UnnumberedEvent[] = [];
    for (const call of finalCalls.values()) {
      if (open.blocks.some((block) => block.kind === "tool" && block.id === call.id)) continue;
      events.push(
        ...this.toolChunk(open, {
          id: call.id,
          name: call.name,
          args: JSON.stringify(call.args ?? {}),
        }),
      );
    }
    events.push(
      ...open.blocks.map((block) =>
        this.event(open, {
          event: "content-block-finish",
          index: block.index,
          content:
            block.kind === "text"
              ? { type: "text", text: block.text }
              : finalCall(block, finalCalls),
        }),
      ),
    );
    const usage = isRecord(final?.usage_metadata) ? final.usage_metadata : open.usage;
    events.push(
      this.event(open, {
        event: "message-finish",
        reason: open.reason ?? "stop",
        ...(usage ? { usage: usageOf(usage) } : {}),
      }),
    );
    return events;
  }

  private event(open: OpenMessage, data: Record<string, unknown>): UnnumberedEvent {
    return { method: "messages", namespace: open.namespace, data };
  }
}

interface OpenBlock {
  kind: "text" | "tool";
  /** Its place in the message (the protocol's block index). */
  index: number;
  text: string;
  args: string;
  id?: string;
  name?: string;
  /** The model's own index of the call's chunks. */
  position?: number | undefined;
}

interface OpenMessage {
  id: string;
  namespace: string[];
  /** Where the graph that called the model runs (its namespace without the model's task). */
  graphNamespace: string[];
  blocks: OpenBlock[];
  usage: Record<string, unknown> | undefined;
  reason: string | undefined;
}

/**
 * Where a message streams: the checkpoint namespace of the model call that made it
 * (`langgraph_checkpoint_ns` of the chunk's metadata, e.g. `model_request:<task>` or
 * `tools:<task>|model_request:<task>` for a subagent's), as LangGraph's v3 stream places it;
 * the event's own namespace when the metadata has none.
 */
function messageNamespace(eventNamespace: string[], metadata: unknown): string[] {
  const ns = isRecord(metadata) ? metadata.langgraph_checkpoint_ns : undefined;
  if (typeof ns !== "string" || ns === "") return eventNamespace;
  return ns.split("|");
}

function textsOf(content: unknown): string[] {
  if (typeof content === "string") return content ? [content] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) =>
    isRecord(part) && part.type === "text" && typeof part.text === "string" && part.text
      ? [part.text]
      : [],
  );
}

/** A finished tool block: the call as the node reported it, else its streamed arguments parsed. */
function finalCall(block: OpenBlock, finals: Map<string, Record<string, unknown>>) {
  const final = block.id ? finals.get(block.id) : undefined;
  if (final)
    return {
      type: "tool_call",
      id: block.id,
      name: final.name ?? block.name,
      args: final.args ?? {},
    };
  try {
    const args: unknown = JSON.parse(block.args || "{}");
    return { type: "tool_call", id: block.id, name: block.name, args };
  } catch (error) {
    return {
      type: "invalid_tool_call",
      id: block.id,
      name: block.name,
      args: block.args,
      error: messageOf(error),
    };
  }
}

function usageOf(usage: Record<string, unknown>) {
  const pick = (key: string) => (typeof usage[key] === "number" ? { [key]: usage[key] } : {});
  return { ...pick("input_tokens"), ...pick("output_tokens"), ...pick("total_tokens") };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
