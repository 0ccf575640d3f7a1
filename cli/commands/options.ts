import { DEMO_UID } from "../../agents/demo.js";
import { nonEmpty, type OptionValues, UsageError } from "../command-line.js";
import type { FlagOption, StoreOptions, TextOption } from "./declaration.js";

/** The options more than one command takes; an option of one command is declared in its module. */

/** `--uid`: the user to act as. Every command takes it. */
export const UID: TextOption = {
  name: "uid",
  type: "string",
  flag: "--uid <uid>",
  about: `The user to act as (default: ${DEMO_UID}).`,
  global: true,
};

/** `--data`: the data folder. Every command takes it. */
export const DATA: TextOption = {
  name: "data",
  type: "string",
  flag: "--data <dir>",
  about: "Data folder (default: $SUBAGENT_GRAPH_DATA, else ./data).",
  global: true,
};

/** `-h`, `--help`: the command's help (the general usage without one). */
export const HELP: FlagOption = {
  name: "help",
  type: "boolean",
  short: "h",
  flag: "-h, --help",
  about: "Show this text.",
  global: true,
};

/** `--agent`: the agent a command uses (`chat`, `files upload`). */
export const AGENT: TextOption = {
  name: "agent",
  type: "string",
  flag: "--agent <slug>",
  about: "chat, files upload: the agent to use (default: your default agent).",
};

/** `--port`: where `serve` and `studio` listen. */
export const PORT: TextOption = {
  name: "port",
  type: "string",
  flag: "--port <n>",
  about: "serve / studio: the port (default $PORT, else 8787 / $STUDIO_PORT, else 2025).",
};

/** `--host`: the address `serve` and `studio` listen on. */
export const HOST: TextOption = {
  name: "host",
  type: "string",
  flag: "--host <address>",
  about: "serve / studio: the address to listen on (default 127.0.0.1).",
};

/**
 * `--uid` and `--data` with their defaults: the demo user, `$SUBAGENT_GRAPH_DATA`, `./data`.
 *
 * @throws UsageError when either is given blank.
 */
export function storeOptions(values: OptionValues, env: NodeJS.ProcessEnv): StoreOptions {
  const data = nonEmpty(textOf(values, DATA), "--data");
  return {
    uid: nonEmpty(textOf(values, UID), "--uid") ?? DEMO_UID,
    dataDir: data ?? (env.SUBAGENT_GRAPH_DATA?.trim() || "data"),
    dataGiven: data !== undefined,
  };
}

/**
 * `--port`'s value, or the default from the environment, as a port number.
 *
 * @throws UsageError unless it is a whole number from 0 to 65535.
 */
export function portOf(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new UsageError(`port "${text}" is not a port number: use 0-65535 (0 picks a free one)`);
  }
  return port;
}

function textOf(values: OptionValues, option: TextOption): string | undefined {
  const value = values[option.name];
  return typeof value === "string" ? value : undefined;
}
