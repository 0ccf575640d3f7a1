import { messageOf } from "../../errors.js";
import { describe, type EventFilter, readFilter } from "./parse.js";
import type { RunDoor } from "./run-adapter.js";
import type { ThreadSession } from "./thread-session.js";
import {
  CommandRefusal,
  errorResponse,
  type ProtocolCommand,
  type ProtocolResponse,
  type ResponseMeta,
} from "./wire.js";

/** The commands we answer (anything else is `unknown_command`, naming these). */
export const COMMANDS = [
  "run.start",
  "input.respond",
  "state.get",
  "agent.getTree",
  "subscription.subscribe",
  "subscription.unsubscribe",
  "subscription.reconnect",
] as const;

/** A WebSocket connection's subscriptions (`websocket.ts`); HTTP has none. */
export interface Subscriptions {
  /** Adds one; its replay is sent by `after` (once the response is on the wire). */
  subscribe(filter: EventFilter): { id: string; replayed: number; after: () => void };
  unsubscribe(id: string): boolean;
  /** Sends again the kept events after `afterSeq` that the subscriptions want. */
  reconnect(afterSeq: number): number;
}

/** Who sends a command, on which thread, over which transport. */
export interface CommandContext {
  uid: string;
  /** The thread as the caller names it, its stored id, and whether the caller has it yet. */
  thread: { external: string; id: string; exists: boolean };
  /** The caller's credentials, for starting runs through the run route. */
  auth: Record<string, string>;
  session: ThreadSession;
  door: RunDoor;
  subscriptions?: Subscriptions;
}

/** A command's answer, and what to do once it is sent (a subscription's replay). */
export interface CommandOutcome {
  response: ProtocolResponse;
  /** The HTTP status of the answer (200 unless the thread is not the caller's). */
  status: number;
  after?: () => void;
}

/**
 * Answers one command. Every refusal is the protocol's error envelope naming what is wrong;
 * nothing here throws.
 */
export async function runCommand(
  command: ProtocolCommand,
  context: CommandContext,
): Promise<CommandOutcome> {
  const meta = (): ResponseMeta => ({
    thread_id: context.thread.external,
    applied_through_seq: context.session.seq,
  });
  try {
    const { result, after } = await dispatch(command, context);
    return {
      response: { type: "success", id: command.id, result, meta: meta() },
      status: 200,
      ...(after ? { after } : {}),
    };
  } catch (error) {
    if (error instanceof CommandRefusal) {
      return {
        response: errorResponse(command.id, error.code, error.message, meta()),
        status: error.status,
      };
    }
    const message = messageOf(error);
    return {
      response: errorResponse(
        command.id,
        "unknown_error",
        `${command.method} failed: ${message}`,
        meta(),
      ),
      status: 200,
    };
  }
}

async function dispatch(
  command: ProtocolCommand,
  context: CommandContext,
): Promise<{ result: Record<string, unknown>; after?: () => void }> {
  const { params } = command;
  switch (command.method) {
    case "run.start":
      return { result: await runStart(params, context) };
    case "input.respond":
      await inputRespond(params, context);
      return { result: {} };
    case "state.get":
      return { result: await stateGet(params, context) };
    case "agent.getTree":
      return { result: { tree: context.session.tree(context.thread.external) } };
    case "subscription.subscribe": {
      const subscriptions = needSocket(command.method, context);
      const { id, replayed, after } = subscriptions.subscribe(readFilter(params, false));
      return { result: { subscription_id: id, replayed_events: replayed }, after };
    }
    case "subscription.unsubscribe": {
      const subscriptions = needSocket(command.method, context);
      const id = params.subscription_id;
      if (typeof id !== "string")
        throw refusal(
          `subscription_id: ${describe(id)}: name the subscription to end (subscription.subscribe's subscription_id)`,
        );
      if (!subscriptions.unsubscribe(id)) {
        throw new CommandRefusal(
          "no_such_subscription",
          `subscription_id: no subscription "${id.slice(0, 80)}" on this connection`,
        );
      }
      return { result: {} };
    }
    case "subscription.reconnect": {
      const subscriptions = needSocket(command.method, context);
      const last = params.last_event_id;
      const after = last === undefined ? 0 : Number(last);
      if (!Number.isSafeInteger(after) || after < 0) {
        throw refusal(
          `last_event_id: ${describe(last)}: send the event_id of the last event you processed`,
        );
      }
      return { result: { restored: true }, after: () => void subscriptions.reconnect(after) };
    }
    default:
      throw new CommandRefusal(
        "unknown_command",
        `method: ${describe(command.method)} is not a command here: use ${COMMANDS.join(", ")}`,
      );
  }
}

async function runStart(params: Record<string, unknown>, context: CommandContext) {
  const assistantId = params.assistant_id;
  if (typeof assistantId !== "string" || assistantId === "") {
    throw refusal(`assistant_id: ${describe(assistantId)}: name the agent to run (its id or slug)`);
  }
  const { config, checkpointId } = runConfigOf(
    optionalObject(params, "config"),
    context.thread.external,
  );
  const metadata = optionalObject(params, "metadata");
  const strategy = params.multitask_strategy ?? params.multitaskStrategy;
  if (strategy !== undefined && typeof strategy !== "string") {
    throw refusal(
      `multitask_strategy: ${describe(strategy)}: use "reject", "interrupt", "rollback" or "enqueue"`,
    );
  }
  const started = await context.door.start({
    auth: context.auth,
    thread: context.thread.external,
    assistantId,
    input: params.input,
    ...(config ? { config } : {}),
    ...(checkpointId ? { checkpointId } : {}),
    ...(metadata ? { metadata } : {}),
    ...(strategy ? { multitaskStrategy: strategy } : {}),
  });
  context.session.follow(started.runId, started.agentId);
  return { run_id: started.runId };
}

/**
 * The run config of a `run.start` as our run routes take it. `@langchain/react` always sends
 * `configurable.thread_id` (the thread the command is for) and, for `submit({ forkFrom })`,
 * `configurable.checkpoint_id`: the first is taken when it names this thread, the second becomes
 * the run's checkpoint; any other configurable key is left for the run route to refuse by name.
 */
function runConfigOf(
  config: Record<string, unknown> | undefined,
  thread: string,
): { config: Record<string, unknown> | undefined; checkpointId: string | undefined } {
  const configurable = config?.configurable;
  if (typeof configurable !== "object" || configurable === null || Array.isArray(configurable)) {
    return { config, checkpointId: undefined };
  }
  const {
    thread_id: threadId,
    checkpoint_id: checkpointId,
    ...rest
  } = configurable as Record<string, unknown>;
  if (threadId !== undefined && threadId !== thread) {
    throw refusal(
      `config.configurable.thread_id: ${describe(threadId)} is not this thread ("${thread}"): leave it out, or send the command to /threads/${threadId}/commands`,
    );
  }
  if (checkpointId !== undefined && (typeof checkpointId !== "string" || checkpointId === "")) {
    throw refusal(
      `config.configurable.checkpoint_id: ${describe(checkpointId)}: use a checkpoint id from the thread's history, or leave it out`,
    );
  }
  const { configurable: _given, ...others } = config as Record<string, unknown>;
  const kept = Object.keys(rest).length > 0 ? { ...others, configurable: rest } : others;
  return {
    config: Object.keys(kept).length > 0 ? kept : undefined,
    checkpointId: checkpointId as string | undefined,
  };
}

/**
 * Answers pending requests for approval: `{ interrupt_id, response }` or `{ responses: [...] }`
 * become our resume, a map from interrupt id to its response (README "Approvals"), run under
 * the agent the thread waits under.
 */
async function inputRespond(params: Record<string, unknown>, context: CommandContext) {
  for (const field of ["update", "goto"]) {
    if (params[field] !== undefined) {
      throw new CommandRefusal(
        "not_supported",
        `${field}: threads resume only with responses (command.resume): leave ${field} out`,
      );
    }
  }
  const resume: Record<string, unknown> = {};
  if (params.responses !== undefined) {
    if (!Array.isArray(params.responses) || params.responses.length === 0) {
      throw refusal(
        `responses: ${describe(params.responses)}: send a non-empty list of { interrupt_id, response }`,
      );
    }
    for (const [index, entry] of params.responses.entries()) {
      const id =
        typeof entry === "object" && entry !== null
          ? (entry as Record<string, unknown>).interrupt_id
          : undefined;
      if (typeof id !== "string" || id === "")
        throw refusal(`responses.${index}.interrupt_id: ${describe(id)}: name a pending interrupt`);
      resume[id] = (entry as Record<string, unknown>).response;
    }
  } else {
    const id = params.interrupt_id;
    if (typeof id !== "string" || id === "") {
      throw refusal(
        `interrupt_id: ${describe(id)}: name the pending interrupt to answer (an input.requested event's interrupt_id)`,
      );
    }
    resume[id] = params.response;
  }
  const agentId = context.thread.exists
    ? await context.door.threadAgent(context.uid, context.thread.id)
    : undefined;
  if (!context.thread.exists) throw threadNotFound(context, "nothing on it waits for input");
  if (!agentId) {
    throw new CommandRefusal(
      "no_such_run",
      `thread "${context.thread.external}" has never run, so nothing on it waits for input: start a run with run.start`,
    );
  }
  const metadata = optionalObject(params, "metadata");
  const started = await context.door.start({
    auth: context.auth,
    thread: context.thread.external,
    assistantId: agentId,
    command: { resume },
    ...(metadata ? { metadata } : {}),
  });
  context.session.follow(started.runId, started.agentId);
}

async function stateGet(params: Record<string, unknown>, context: CommandContext) {
  const keys = params.keys;
  if (
    keys !== undefined &&
    (!Array.isArray(keys) || !keys.every((key) => typeof key === "string"))
  ) {
    throw refusal(`keys: ${describe(keys)}: send a list of state keys, e.g. ["messages"]`);
  }
  const state = context.thread.exists
    ? await context.door.state(context.uid, context.thread.id)
    : undefined;
  if (!state) throw threadNotFound(context, "it has no state");
  const values = keys
    ? Object.fromEntries(
        Object.entries(state.values).filter(([key]) => (keys as string[]).includes(key)),
      )
    : state.values;
  return { values, checkpoint: state.checkpoint };
}

function needSocket(method: string, context: CommandContext): Subscriptions {
  if (context.subscriptions) return context.subscriptions;
  throw new CommandRefusal(
    "not_supported",
    `${method} is for the WebSocket transport (GET /threads/${context.thread.external}/stream/events); over HTTP, each POST /threads/${context.thread.external}/stream/events is a subscription (its body the filter, its "since" the replay)`,
  );
}

function optionalObject(
  params: Record<string, unknown>,
  field: string,
): Record<string, unknown> | undefined {
  const value = params[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw refusal(`${field}: ${describe(value)} is not an object`);
  return value as Record<string, unknown>;
}

function refusal(message: string): CommandRefusal {
  return new CommandRefusal("invalid_argument", message);
}

/** The caller has no thread by that name (another user's is no different): HTTP 404. */
function threadNotFound(context: CommandContext, why: string): CommandRefusal {
  return new CommandRefusal(
    "invalid_argument",
    `thread "${context.thread.external}" not found (${why}): run.start creates it; or name one of your threads`,
    404,
  );
}
