import { isSupportedChannel } from "@langchain/langgraph/stream";
import { messageOf } from "../../errors.js";
import { findTooDeep, formatJsonPath } from "../../util/json-depth.js";
import { findPollutingKey, MAX_JSON_DEPTH } from "../json-body.js";
import { CommandRefusal, type ProtocolCommand } from "./wire.js";

/**
 * Reading untrusted protocol input: a command (an HTTP body or a WebSocket frame) and an event
 * filter (the body of `POST /threads/:id/stream/events`, or a subscribe's params). Every refusal
 * is a {@link CommandRefusal} naming the field, the value and the fix, so each transport answers
 * it with the protocol's error envelope.
 */

/** Largest command a WebSocket frame may carry (HTTP bodies are capped by the server's limit). */
export const MAX_COMMAND_BYTES = 1024 * 1024;
/** Most namespaces one filter may name, and most segments in one. */
const MAX_NAMESPACES = 64;
const MAX_SEGMENTS = 32;

/**
 * Parses a command's JSON text with the checks every JSON body of ours gets
 * (`server/json-body.ts`): not deeper than {@link MAX_JSON_DEPTH}, no prototype-polluting key.
 * @throws CommandRefusal `invalid_argument` (status 400) when it cannot be read
 */
export function parseJsonText(text: string): unknown {
  if (Buffer.byteLength(text) > MAX_COMMAND_BYTES) {
    throw new CommandRefusal(
      "invalid_argument",
      `the command has ${Buffer.byteLength(text)} bytes: send at most ${MAX_COMMAND_BYTES}`,
      413,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = messageOf(error);
    throw new CommandRefusal(
      "invalid_argument",
      `the command is not valid JSON (${why}): send {"id": <integer>, "method": "<method>", "params": {…}}`,
      400,
    );
  }
  const tooDeep = findTooDeep(value, MAX_JSON_DEPTH);
  if (tooDeep) {
    const field = formatJsonPath(tooDeep.path) || "body";
    throw new CommandRefusal(
      "invalid_argument",
      `${field}: the command nests deeper than ${MAX_JSON_DEPTH} levels: flatten the value`,
      400,
    );
  }
  const polluting = findPollutingKey(value);
  if (polluting) {
    throw new CommandRefusal(
      "invalid_argument",
      `${formatJsonPath(polluting.path, 8)}: a "${polluting.key}" key is refused (prototype pollution guard): rename the key`,
      400,
    );
  }
  return value;
}

/**
 * A command's envelope: a non-negative integer `id`, a string `method`, `params` an object (or
 * left out). The id, when readable, is returned with the refusal so the answer can name it.
 * @throws CommandRefusal `invalid_argument` (status 400), with `commandId` when it has one
 */
export function readCommand(value: unknown): ProtocolCommand {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CommandRefusal(
      "invalid_argument",
      `a command is a JSON object {"id", "method", "params"}, not ${describe(value)}`,
      400,
    );
  }
  const { id, method, params } = value as Record<string, unknown>;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
    throw new CommandRefusal(
      "invalid_argument",
      `id: ${id === undefined ? "missing" : describe(id)}: every command needs an integer id >= 0 (its response carries it back)`,
      400,
    );
  }
  if (typeof method !== "string" || method.length === 0) {
    throw refusalWithId(
      id,
      `method: ${method === undefined ? "missing" : describe(method)}: name the command, e.g. "run.start"`,
    );
  }
  if (
    params !== undefined &&
    (typeof params !== "object" || params === null || Array.isArray(params))
  ) {
    throw refusalWithId(id, `params: ${describe(params)} is not an object: send params as {…}`);
  }
  return { id, method, params: (params ?? {}) as Record<string, unknown> };
}

/** A refusal that knows the id of the command it refuses. */
export class IdentifiedRefusal extends CommandRefusal {
  constructor(
    readonly commandId: number,
    message: string,
  ) {
    super("invalid_argument", message, 400);
  }
}

function refusalWithId(id: number, message: string): IdentifiedRefusal {
  return new IdentifiedRefusal(id, message);
}

/** Which events a stream or subscription wants (`EventStreamRequest`, `SubscribeParams`). */
export interface EventFilter {
  channels: string[];
  namespaces?: string[][];
  depth?: number;
  /** Only events after this thread sequence number (a replay's start). */
  since?: number;
}

/**
 * An event filter from untrusted params: `channels` (non-empty, each a protocol channel or
 * `custom:<name>`), `namespaces` (lists of string segments), `depth` and `since` (integers >= 0).
 * `allowSince` is false for a WebSocket subscribe (its replay is `subscription.reconnect`).
 * Unknown fields are refused, as the dev server does for a stream's body.
 * @throws CommandRefusal `invalid_argument` naming the field
 */
export function readFilter(params: Record<string, unknown>, allowSince: boolean): EventFilter {
  const known = new Set(["channels", "namespaces", "depth", ...(allowSince ? ["since"] : [])]);
  const extra = Object.keys(params).filter((key) => !known.has(key));
  if (extra.length > 0) {
    throw new CommandRefusal(
      "invalid_argument",
      `${extra.map((key) => JSON.stringify(key)).join(", ")}: not a filter field: use ${[...known].join(", ")}`,
      400,
    );
  }
  const { channels, namespaces, depth, since } = params;
  if (!Array.isArray(channels) || channels.length === 0) {
    throw new CommandRefusal(
      "invalid_argument",
      `channels: ${channels === undefined ? "missing" : describe(channels)}: send a non-empty list, e.g. ["values", "messages", "lifecycle"]`,
      400,
    );
  }
  for (const [index, channel] of channels.entries()) {
    if (typeof channel !== "string" || !isSupportedChannel(channel)) {
      throw new CommandRefusal(
        "invalid_argument",
        `channels.${index}: ${describe(channel)} is not a channel: use values, updates, messages, tools, lifecycle, input, checkpoints, tasks, custom or custom:<name>`,
        400,
      );
    }
  }
  const filter: EventFilter = { channels: [...new Set(channels as string[])] };
  if (namespaces !== undefined) filter.namespaces = readNamespaces(namespaces);
  if (depth !== undefined) filter.depth = readCount("depth", depth);
  if (since !== undefined) filter.since = readCount("since", since);
  return filter;
}

function readNamespaces(value: unknown): string[][] {
  const shape = `a list of namespaces, each a list of segments such as ["tools:<task id>"] (at most ${MAX_NAMESPACES}, of ${MAX_SEGMENTS} segments)`;
  if (!Array.isArray(value) || value.length > MAX_NAMESPACES) {
    throw new CommandRefusal(
      "invalid_argument",
      `namespaces: ${describe(value)}: send ${shape}`,
      400,
    );
  }
  return value.map((namespace, index) => {
    if (
      !Array.isArray(namespace) ||
      namespace.length > MAX_SEGMENTS ||
      !namespace.every((segment) => typeof segment === "string")
    ) {
      throw new CommandRefusal(
        "invalid_argument",
        `namespaces.${index}: ${describe(namespace)}: send ${shape}`,
        400,
      );
    }
    return namespace as string[];
  });
}

function readCount(field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new CommandRefusal(
      "invalid_argument",
      `${field}: ${describe(value)} is not an integer >= 0`,
      400,
    );
  }
  return value;
}

/** A short description of an untrusted value for a message (never its whole text). */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  }
  return `${typeof value} ${String(value).slice(0, 40)}`;
}
