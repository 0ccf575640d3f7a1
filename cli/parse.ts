import { nonEmpty, type OptionValues, tokenize, UsageError } from "./command-line.js";
import type {
  CommandDeclaration,
  HelpTexts,
  OptionDeclaration,
  ParseInput,
  StoreOptions,
} from "./commands/declaration.js";
import { optionOf } from "./commands/declaration.js";
import { help } from "./commands/help.js";
import { ALL_OPTIONS, COMMAND_NAMES, COMMANDS, type Command } from "./commands/index.js";
import { HELP, storeOptions } from "./commands/options.js";
import type { CliContext, Io } from "./context.js";
import { unknownCommand } from "./help.js";

/** A command line understood: the command, and its action bound to it. */
export interface CommandLine {
  command: Command;
  action:
    | { needs: "runtime"; store: StoreOptions; run(context: CliContext): Promise<number> }
    | { needs: "nothing"; run(io: Io, help: HelpTexts): Promise<number> };
}

/**
 * A command of the list, its parse returning any Command. Each action still gets only its own
 * command: `bind` hands it the one its own declaration parsed.
 */
type AnyCommand = CommandDeclaration<Command>;

const commands: readonly AnyCommand[] = COMMANDS;

/**
 * Parses the arguments after the script name into the command (see {@link readCommandLine}).
 *
 * @throws UsageError naming the unknown command, the bad option or the missing argument.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  return readCommandLine(argv, env).command;
}

/**
 * Parses the arguments after the script name, in this order: the options (any command's, before
 * or after its name), `help` and `--help`, `--uid` and `--data`, an option the command does not
 * declare, each given option's value, the command's own parse (`cli/commands/<name>.ts`), then a
 * scoped option its subcommand does not take.
 *
 * @throws UsageError naming the unknown command, the bad option or the missing argument.
 */
export function readCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CommandLine {
  const { positionals, values } = tokenize(argv, ALL_OPTIONS);
  const [name, ...args] = positionals;
  // `help [command]` reads no option; `<command> … --help` is that command's help, whatever
  // else the line holds.
  if (name === help.name) {
    return helpOn(help.parse(inputOf(args, values, env, storeOptions({}, env))).topic);
  }
  if (values[HELP.name] === true) return helpOn(name);
  if (name === undefined) throw new UsageError("no command given");

  const store = storeOptions(values, env);
  const declaration = commands.find((command) => command.name === name);
  refuseUndeclared(declaration, name, values);
  if (!declaration) throw unknownCommand(name);
  refuseEmpty(declaration, values);
  const command = declaration.parse(inputOf(args, values, env, store));
  refuseOutOfScope(declaration, args[0], values);
  return bind(declaration, command, store);
}

function helpOn(topic: string | undefined): CommandLine {
  if (topic !== undefined && !COMMAND_NAMES.includes(topic)) throw unknownCommand(topic);
  return bind(help, { name: "help", topic }, storeOptions({}, {}));
}

/** The command with its declaration's action bound to it. */
function bind(declaration: AnyCommand, command: Command, store: StoreOptions): CommandLine {
  const { action } = declaration;
  return {
    command,
    action:
      action.needs === "runtime"
        ? { needs: "runtime", store, run: (context) => action.run(context, command) }
        : { needs: "nothing", run: (io, texts) => action.run(command, io, texts) },
  };
}

/** What a parse reads (`help`'s reads no option: its `store` is the defaults). */
function inputOf(
  args: readonly string[],
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  store: StoreOptions,
): ParseInput {
  return {
    args,
    env,
    store,
    text: (option) => {
      const value = values[option.name];
      return typeof value === "string" ? value : undefined;
    },
    flag: (option) => values[option.name] === true,
  };
}

/** @throws UsageError for a given option `name`'s declaration does not take, naming those that do. */
function refuseUndeclared(
  declaration: AnyCommand | undefined,
  name: string,
  values: OptionValues,
): void {
  for (const option of ALL_OPTIONS) {
    if (option.global || values[option.name] === undefined || takes(declaration, option)) continue;
    const takers = commands.filter((command) => takes(command, option));
    throw new UsageError(
      `option --${option.name} is only for ${takers.map((c) => `"${c.name}"`).join(" and ")}, not "${name}"`,
    );
  }
}

/** @throws UsageError for a blank value of an option of the command's that may not be empty. */
function refuseEmpty(declaration: AnyCommand, values: OptionValues): void {
  for (const option of declaration.options.map(optionOf)) {
    const value = values[option.name];
    if (typeof value === "string" && !option.emptyAllowed) nonEmpty(value, `--${option.name}`);
  }
}

/** @throws UsageError for a given scoped option the subcommand `sub` does not take. */
function refuseOutOfScope(declaration: AnyCommand, sub: string | undefined, values: OptionValues) {
  for (const use of declaration.options) {
    if (!("option" in use) || values[use.option.name] === undefined) continue;
    if (sub !== undefined && use.only.includes(sub)) continue;
    const forms = use.only.map((only) => `"${declaration.name} ${only}"`).join(" and ");
    throw new UsageError(use.refusal ?? `option --${use.option.name} is only for ${forms}`);
  }
}

function takes(declaration: AnyCommand | undefined, option: OptionDeclaration): boolean {
  return declaration?.options.some((use) => optionOf(use) === option) ?? false;
}
