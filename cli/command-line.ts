import { parseArgs } from "node:util";
import { messageOf } from "../errors.js";
import type { OptionDeclaration } from "./commands/declaration.js";

/**
 * The parsing core every command's declaration uses: the usage error, splitting a command line
 * into positionals and option values, and the checks on values and arguments that name the
 * mistake. What each command takes is in its declaration (`cli/commands/`), not here.
 */

/** A mistake in the command line: printed with the usage (`cli/help.ts`), exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The options given on a command line, by name: a string, `true` for a flag. */
export type OptionValues = Readonly<Record<string, string | boolean | undefined>>;

/**
 * Splits `argv` into positionals and option values. Every command's options are known here: an
 * option may come before the command's name (`--data d agents list`); whether the command takes
 * it is the parser's next question (`cli/parse.ts`).
 *
 * @throws UsageError for an unknown option or a missing value, in `util.parseArgs`' own words
 *   ("Unknown option '--x'", "Option '--uid <value>' argument missing").
 */
export function tokenize(
  argv: readonly string[],
  options: readonly OptionDeclaration[],
): { positionals: string[]; values: OptionValues } {
  const config = Object.fromEntries(
    options.map((option) => [
      option.name,
      option.short === undefined
        ? { type: option.type }
        : { type: option.type, short: option.short },
    ]),
  );
  try {
    const { positionals, values } = parseArgs({
      args: [...argv],
      options: config,
      allowPositionals: true,
      strict: true,
    });
    return { positionals, values };
  } catch (error) {
    // Only parseArgs' error type is replaced: its messages already name the option.
    throw new UsageError(messageOf(error));
  }
}

/**
 * `value`, unless it is blank.
 *
 * @throws UsageError naming `flag` when the value is blank.
 */
export function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`option ${flag} needs a non-empty value`);
  return value;
}

/**
 * Nothing, when `extra` is empty.
 *
 * @throws UsageError quoting the extra arguments `form` (e.g. `"agents show <slug>"`) does not take.
 */
export function noMoreArguments(form: string, extra: readonly string[]): void {
  if (extra.length > 0) {
    throw new UsageError(
      `"${form}" takes no further arguments, got ${extra.map((a) => `"${a}"`).join(" ")}`,
    );
  }
}

/**
 * The refusal of a missing (`sub` undefined) or unknown subcommand of `command`.
 *
 * @param choices the subcommands as a sentence: `list or show <slug>`.
 */
export function subcommandError(
  command: string,
  sub: string | undefined,
  choices: string,
): UsageError {
  return new UsageError(
    sub === undefined
      ? `"${command}" needs a subcommand: ${choices}`
      : `unknown subcommand "${command} ${sub}": use ${choices}`,
  );
}
