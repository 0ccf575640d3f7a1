import { agents } from "./agents.js";
import { chat } from "./chat.js";
import type { CommandDeclaration, OptionDeclaration } from "./declaration.js";
import { optionOf } from "./declaration.js";
import { demo } from "./demo.js";
import { files } from "./files.js";
import { help } from "./help.js";
import { kb } from "./kb.js";
import { mcp } from "./mcp.js";
import { DATA, HELP, UID } from "./options.js";
import { serve } from "./serve.js";
import { skills } from "./skills.js";
import { studio } from "./studio.js";
import { threads } from "./threads.js";
import { tokens } from "./tokens.js";
import { users } from "./users.js";

/**
 * Every command, in the order the usage lists them: the one list. A new command is a module
 * beside this one (see `declaration.ts`) and a line here.
 */
export const COMMANDS = [
  serve,
  studio,
  chat,
  agents,
  threads,
  skills,
  kb,
  mcp,
  files,
  users,
  tokens,
  demo,
  help,
] as const;

/** A parsed command line: what any command's parse returns. */
export type Command = ParsedBy<(typeof COMMANDS)[number]>;

type ParsedBy<D> = D extends CommandDeclaration<infer C> ? C : never;

/** The commands' names, as `help <command>` takes them. */
export const COMMAND_NAMES: readonly string[] = COMMANDS.map((command) => command.name);

/**
 * Every option once: `--uid` and `--data`, then each command's in the order of the list,
 * `--help` last. The usage lists them so, and the tokenizer knows them all.
 */
export const ALL_OPTIONS: readonly OptionDeclaration[] = [
  ...new Set([UID, DATA, ...COMMANDS.flatMap((command) => command.options.map(optionOf)), HELP]),
];
