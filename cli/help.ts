import { UsageError } from "./command-line.js";
import {
  type CommandDeclaration,
  type Form,
  type HelpTexts,
  type OptionDeclaration,
  optionOf,
} from "./commands/declaration.js";
import { ALL_OPTIONS, COMMAND_NAMES, COMMANDS } from "./commands/index.js";
import { HELP } from "./commands/options.js";

/**
 * The help, written from the commands' declarations (`cli/commands/`): the general usage and
 * each command's own. Nothing here names a command.
 */

/** How the command line names itself: the installed bin, and the same in a clone. */
const BIN = "subagent-graph";
const IN_A_CLONE = "npm run cli --";

type AnyCommand = CommandDeclaration<{ name: string }>;

/** A form and its explanation, aligned as the help lists them. */
function formLines(form: Form): string[] {
  const indent = " ".repeat(23);
  const [first = "", ...rest] = form.about;
  const head =
    form.usage.length <= 20
      ? [`  ${form.usage.padEnd(20)} ${first}`]
      : [`  ${form.usage}`, `${indent}${first}`];
  return [...head, ...rest.map((line) => `${indent}${line}`)];
}

/** An option and its explanation; a flag too long for its column puts it on the next line. */
function optionLine({ flag, about }: OptionDeclaration): string {
  return flag.length <= 20
    ? `  ${flag.padEnd(21)}${about}`
    : `  ${flag}\n${" ".repeat(23)}${about}`;
}

const commands: readonly AnyCommand[] = COMMANDS;

/** The usage text of `help`, and of every usage error. */
export const USAGE = [
  `Usage: ${BIN} <command> [options]`,
  `       (in a clone of the repository: ${IN_A_CLONE} <command> [options])`,
  "",
  "Commands:",
  ...commands.flatMap((command) => command.forms.flatMap(formLines)),
  "",
  "Options:",
  ...ALL_OPTIONS.map(optionLine),
  ...commands.flatMap((command) => command.sharedNotes ?? []).flatMap((note) => ["", note]),
  "",
  "Examples:",
  // `help`'s own example is the text being read.
  ...commands
    .filter((command) => command.name !== "help")
    .flatMap((command) => command.examples.slice(0, 1).map((example) => `  ${BIN} ${example}`)),
].join("\n");

/**
 * The help of one command: its forms, the options it takes, notes and examples.
 *
 * @throws UsageError when `name` is not a command.
 */
export function commandHelp(name: string): string {
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) throw unknownCommand(name);
  const options = command.options.map(optionOf);
  const withOptions = options.length > 0 ? " [options]" : "";
  return [
    `Usage: ${command.forms.map((form, index) => `${index === 0 ? "" : "       "}${BIN} ${form.usage}${withOptions}`).join("\n")}`,
    `       (in a clone of the repository: ${IN_A_CLONE} ${command.name} …)`,
    "",
    ...command.forms.flatMap(formLines),
    "",
    "Options:",
    ...[...options, HELP].map(optionLine),
    ...[...(command.notes ?? []), ...(command.sharedNotes ?? [])].flatMap((note) => ["", note]),
    "",
    "Examples:",
    ...command.examples.map((example) => `  ${BIN} ${example}`),
  ].join("\n");
}

/** The help for the `help` command's action. */
export const HELP_TEXTS: HelpTexts = { usage: USAGE, of: commandHelp };

/** The refusal of a word that is no command. */
export function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command "${name}": use one of ${COMMAND_NAMES.join(", ")}`);
}
