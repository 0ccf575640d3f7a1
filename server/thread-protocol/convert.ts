import { SUBAGENT_EVENTS, TASK_TOOL_NAME } from "../../contract.js";
import { isRecord, MessageAssembler } from "./messages.js";
import { type AgentStatus, AgentTree } from "./tree.js";
import type { UnnumberedEvent } from "./wire.js";

/** LangGraph's key of a paused step's requests, in `values` and `updates`. */
const INTERRUPT = "__interrupt__";

/** How a run ended, for its root's last `lifecycle` event. */
export interface RunEnding {
  status: Extract<AgentStatus, "completed" | "failed" | "interrupted">;
  error?: string;
}

/**
 * Turns one run's events as our server logs them (the legacy stream's `values`, `updates`,
 * `messages` and `custom` events, `<mode>|<namespace…>` inside subgraphs and subagents:
 * `server/protocol/translate.ts`) into the thread protocol's events, as LangGraph's own v3
 * stream writes them for the same graph (fixtures in `test/fixtures/protocol-v2/`):
 *
 * - `values` and `updates` as they are (`updates` one event per node, the node in `params.node`),
 *   LangGraph's `__interrupt__` entries as `input.requested` events (`interrupt_id`, `payload`),
 *   each once;
 * - token chunks as content-block `messages` events under the model call's namespace
 *   ({@link MessageAssembler});
 * - `custom` events as `{ payload }`; a subagent's `subagent_started` / `subagent_finished`
 *   also as `tools` events (`tool-started` / `tool-finished` of its `task` call) under its
 *   namespace `tools:<task id>`, which is how the official hooks attach a subagent to its call;
 * - `lifecycle` events for the root (running, then how the run ended) and for each namespace
 *   as it appears and ends ({@link AgentTree}).
 *
 * One converter per run; it reads logged events, so any process of a fleet converts any run.
 */
export class RunConverter {
  readonly tree: AgentTree;
  private readonly messages = new MessageAssembler();
  private readonly asked = new Set<string>();
  /** Subagent namespaces by the id of the `task` call that runs them. */
  private readonly subagents = new Map<string, string[]>();

  constructor(graphName: string) {
    this.tree = new AgentTree(graphName);
  }

  /** The run's first events. */
  start(): UnnumberedEvent[] {
    return this.tree.start();
  }

  /** The protocol events of one logged event (`event` is its SSE name, `data` its payload). */
  convert(event: string, data: unknown): UnnumberedEvent[] {
    const [mode = "", ...namespace] = event.split("|");
    switch (mode) {
      case "values":
        return this.values(namespace, data);
      case "updates":
        return this.updates(namespace, data);
      case "messages": {
        if (!Array.isArray(data)) return [];
        const events = this.messages.chunk(namespace, data[0], data[1]);
        const started = events.find(
          (entry) => isRecord(entry.data) && entry.data.event === "message-start",
        );
        return started ? [...this.tree.ensure(started.namespace), ...events] : events;
      }
      case "custom":
        return this.custom(namespace, data);
      case "error":
        return this.end({ status: "failed", error: errorText(data) });
      default:
        return [];
    }
  }

  /** The run's last events: open messages and namespaces end, then the root. */
  end(ending: RunEnding): UnnumberedEvent[] {
    if (this.tree.ended) return [];
    const status =
      ending.status === "completed" && this.asked.size > 0 ? "interrupted" : ending.status;
    return [...this.messages.finishAll(), ...this.tree.end([], status, ending.error)];
  }

  private values(namespace: string[], data: unknown): UnnumberedEvent[] {
    const events = this.tree.ensure(namespace);
    if (!isRecord(data)) return [...events, { method: "values", namespace, data }];
    const { [INTERRUPT]: interrupts, ...values } = data;
    events.push(...this.inputRequests(namespace, interrupts));
    if (Object.keys(values).length > 0) events.push({ method: "values", namespace, data: values });
    return events;
  }

  private updates(namespace: string[], data: unknown): UnnumberedEvent[] {
    if (!isRecord(data)) return [];
    const events = this.tree.ensure(namespace);
    for (const [node, update] of Object.entries(data)) {
      if (node === INTERRUPT) {
        events.push(...this.inputRequests(namespace, update));
        continue;
      }
      // A model call's namespace ends with the message it made, once its node reported it.
      const calls: string[][] = [];
      for (const message of messagesOf(update)) {
        if (message.type === "ai" && typeof message.id === "string") {
          const finished = this.messages.finishById(message.id, message);
          const at = finished[0]?.namespace;
          if (at && at.join("|") !== namespace.join("|")) calls.push(at);
          events.push(...finished, ...this.toolStarts(namespace, message));
        } else if (message.type === "tool") {
          events.push(...this.toolEnd(namespace, message));
        }
      }
      events.push({ method: "updates", namespace, node, data: update });
      for (const at of calls) events.push(...this.tree.end(at, "completed"));
    }
    return events;
  }

  private custom(namespace: string[], data: unknown): UnnumberedEvent[] {
    const events = this.tree.ensure(namespace);
    events.push({ method: "custom", namespace, data: { payload: data } });
    if (!isRecord(data)) return events;
    const child = Array.isArray(data.namespace) ? (data.namespace as string[]) : undefined;
    if (data.type === SUBAGENT_EVENTS.started && child && typeof data.id === "string") {
      this.subagents.set(data.id, child);
      events.push(...this.tree.ensure(child), {
        method: "tools",
        namespace: child,
        data: {
          event: "tool-started",
          tool_call_id: data.id,
          tool_name: TASK_TOOL_NAME,
          input: JSON.stringify({
            description: data.description,
            subagent_type: data.subagent_type,
          }),
        },
      });
    } else if (data.type === SUBAGENT_EVENTS.waiting && child) {
      events.push(...this.tree.end(child, "interrupted"));
    } else if (data.type === SUBAGENT_EVENTS.finished && isRecord(data.run)) {
      const run = data.run;
      const at = typeof run.id === "string" ? this.subagents.get(run.id) : undefined;
      if (at) {
        const failed = run.status !== "completed";
        events.push(
          {
            method: "tools",
            namespace: at,
            data: failed
              ? {
                  event: "tool-error",
                  tool_call_id: run.id,
                  message: String(run.error ?? run.status),
                }
              : {
                  event: "tool-finished",
                  tool_call_id: run.id,
                  output: run.result_preview ?? null,
                },
          },
          ...this.tree.end(at, failed ? "failed" : "completed"),
        );
      }
    }
    return events;
  }

  /** `tool-started` for the calls of a finished AI message that are not `task` calls. */
  private toolStarts(namespace: string[], message: Record<string, unknown>): UnnumberedEvent[] {
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
    return calls
      .filter((call) => call.name !== TASK_TOOL_NAME && typeof call.id === "string")
      .map((call) => ({
        method: "tools",
        namespace,
        data: {
          event: "tool-started",
          tool_call_id: call.id,
          tool_name: call.name,
          input: JSON.stringify(call.args ?? {}),
        },
      }));
  }

  /** `tool-finished` (or `tool-error`) for a tool's answer, unless a subagent's events say it. */
  private toolEnd(namespace: string[], message: Record<string, unknown>): UnnumberedEvent[] {
    const id = message.tool_call_id;
    if (typeof id !== "string" || this.subagents.has(id) || message.name === TASK_TOOL_NAME)
      return [];
    const data =
      message.status === "error"
        ? { event: "tool-error", tool_call_id: id, message: String(message.content) }
        : { event: "tool-finished", tool_call_id: id, output: message.content };
    return [{ method: "tools", namespace, data }];
  }

  /** `input.requested` for each request not announced yet (LangGraph repeats them). */
  private inputRequests(namespace: string[], interrupts: unknown): UnnumberedEvent[] {
    if (!Array.isArray(interrupts)) return [];
    const events: UnnumberedEvent[] = [];
    for (const entry of interrupts) {
      if (!isRecord(entry) || typeof entry.id !== "string" || this.asked.has(entry.id)) continue;
      this.asked.add(entry.id);
      events.push({
        method: "input.requested",
        namespace,
        data: { interrupt_id: entry.id, payload: entry.value },
      });
    }
    return events;
  }
}

function messagesOf(update: unknown): Record<string, unknown>[] {
  if (!isRecord(update) || !Array.isArray(update.messages)) return [];
  return update.messages.filter(isRecord);
}

function errorText(data: unknown): string {
  if (isRecord(data) && typeof data.message === "string") {
    return typeof data.error === "string" ? `${data.error}: ${data.message}` : data.message;
  }
  return String(data);
}
