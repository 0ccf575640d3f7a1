import type { CliContext, Io } from "../context.js";

/**
 * What a command declares about itself, in one module per command (`cli/commands/<name>.ts`,
 * listed in `cli/commands/index.ts`): its name, help, options, how its arguments become its
 * typed command `C`, and its action. The parser (`cli/parse.ts`) and the help
 * (`cli/help.ts`) are generated from these declarations; nothing else lists the commands.
 *
 * @example
 * export const mcp = declareCommand<McpCommand>({
 *   name: "mcp",
 *   forms: [{ usage: "mcp list", about: ["List the MCP servers."] }],
 *   options: [DATA],
 *   examples: ["mcp list"],
 *   parse: ({ args, store }) => …,
 *   action: {
 *     needs: "runtime",
 *     run: async ({ runtime, io }) => (await import("../mcp.js")).listMcpServers(runtime, io),
 *   },
 * });
 */
export interface CommandDeclaration<C extends { name: string }> {
  /** The command's first word. */
  name: string;
  /** Its forms (`agents list`, `agents show <slug>`), each with lines of explanation. */
  forms: readonly Form[];
  /**
   * The options it takes, in the order its help lists them (`--help` aside, which every
   * command takes). Any other option is refused before {@link parse} runs; a
   * {@link ScopedOption} given to another subcommand, once it has run. `--uid` and `--data`
   * are taken by every command: listing them shows them in its help.
   */
  options: readonly OptionUse[];
  /** Paragraphs after the options (its help only). */
  notes?: readonly string[];
  /** Paragraphs after its notes that the general usage shows too (the chat's commands). */
  sharedNotes?: readonly string[];
  /** Its example command lines, without the bin's name; the usage shows the first. */
  examples: readonly string[];
  /**
   * The arguments after the command's name, as its typed command.
   *
   * @throws UsageError (`cli/command-line.ts`) naming the missing or extra argument.
   */
  parse(input: ParseInput): C;
  /** What runs it. Its module is imported here, lazily: `--help` loads no runtime. */
  action: CommandAction<C>;
}

/** A command's action: with a runtime `run.ts` opens (and closes), or on its own. */
export type CommandAction<C> =
  | {
      /** Runs on an open runtime over the command's data folder; Ctrl-C cancels its run. */
      needs: "runtime";
      run(context: CliContext, command: C): Promise<number>;
    }
  | {
      /** Runs without one (`serve` and `studio` own their process; `help` prints). */
      needs: "nothing";
      run(command: C, io: Io, help: HelpTexts): Promise<number>;
    };

/**
 * The generated help, handed to actions: the `help` command cannot import `cli/help.ts`, which
 * imports every command's declaration, its own included.
 */
export interface HelpTexts {
  usage: string;
  /** One command's help; `name` is a command (the parser checked it). */
  of(name: string): string;
}

/** One form of a command and the lines that explain it. */
export interface Form {
  usage: string;
  about: readonly string[];
}

/** An option: its name on the command line, its kind and its line in the help. */
export interface OptionDeclaration {
  /** `--<name>`. */
  name: string;
  /** A flag (`--replace`) or an option with a value (`--uid <uid>`). */
  type: "boolean" | "string";
  /** A one-letter alias (`-h`). */
  short?: string;
  /** The option as the help shows it: `--uid <uid>`. */
  flag: string;
  /** Its line in the help (say which commands take it when not all do). */
  about: string;
  /** A value may be empty (the command judges it); otherwise an empty value is refused. */
  emptyAllowed?: true;
  /** Every command takes it, listed in its help or not (`--uid`, `--data`, `--help`). */
  global?: true;
}

/** An option with a value. */
export type TextOption = OptionDeclaration & { type: "string" };

/** A flag. */
export type FlagOption = OptionDeclaration & { type: "boolean" };

/** An option some subcommands of a command take, and what refusing it elsewhere says. */
export interface ScopedOption {
  option: OptionDeclaration;
  /** The subcommands (first arguments) that take it: `["create", "update"]` for `kb`. */
  only: readonly string[];
  /** The refusal, when the generated `option --x is only for "kb create"` says too little. */
  refusal?: string;
}

/** An option a command takes: for all its forms, or {@link ScopedOption scoped} to some. */
export type OptionUse = OptionDeclaration | ScopedOption;

/** The paths a command works on (every command but `help` reads them). */
export interface StoreOptions {
  uid: string;
  dataDir: string;
  /** Whether `--data` was given, so hints can repeat it. */
  dataGiven: boolean;
}

/** What a command's {@link CommandDeclaration.parse} gets. */
export interface ParseInput {
  /** The positional arguments after the command's name. */
  args: readonly string[];
  /** `--uid` and `--data`, with their defaults. */
  store: StoreOptions;
  env: NodeJS.ProcessEnv;
  /** A given option's value (already refused when empty, unless it allows that). */
  text(option: TextOption): string | undefined;
  /** Whether a flag was given. */
  flag(option: FlagOption): boolean;
}

/** Declares a command; the identity, there to type `C` from the declaration. */
export function declareCommand<C extends { name: string }>(
  declaration: CommandDeclaration<C>,
): CommandDeclaration<C> {
  return declaration;
}

/** The option of a use. */
export function optionOf(use: OptionUse): OptionDeclaration {
  return "option" in use ? use.option : use;
}
