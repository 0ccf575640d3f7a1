/**
 * SKILL.md front matter.
 *
 * A skill's SKILL.md starts with a YAML block between two `---` lines holding at least `name` and
 * `description`; the rest of the file is the skill's instructions. Other front-matter keys are
 * allowed and ignored so skills written for other tools still install.
 */

import { parse } from "yaml";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import { SKILL_NAME_PATTERN } from "./skill-name.js";

/** The file every skill must have at its top level, starting with the front matter. */
export const SKILL_FILE = "SKILL.md";

/** Longest accepted `description`, in characters (code points), after trimming. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;

/** What a SKILL.md declares. */
export interface SkillManifest {
  /** The skill's name (matches {@link SKILL_NAME_PATTERN}). */
  name: string;
  /** What the skill is for, trimmed; shown to the model to decide when to use the skill. */
  description: string;
  /** Everything after the closing `---` line, with line endings normalised to `\n`. */
  body: string;
}

const FENCE = "---";

/**
 * Parses a SKILL.md.
 *
 * Tolerates a UTF-8 byte order mark and CRLF line endings (files edited on Windows), and trailing
 * spaces after the `---` fences.
 *
 * @param source Names the file in error messages, for example `SKILL.md of skill source "/x"`.
 * @throws SubagentGraphError `INVALID_SKILL` naming `source` when the front matter is missing or
 *   not YAML, or when `name` or `description` is missing or invalid.
 */
export function parseSkillManifest(text: string, source: string): SkillManifest {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trimEnd() !== FENCE) {
    throw invalid(
      `${source} has no front matter: start the file with a "---" line, then "name:" and ` +
        `"description:" lines, then another "---" line`,
    );
  }
  const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === FENCE);
  if (end === -1) {
    throw invalid(`${source} has no closing "---" line after its front matter: add one`);
  }

  let data: unknown;
  try {
    // logLevel "error": throw on errors but do not print warnings to the process.
    data = parse(lines.slice(1, end).join("\n"), { logLevel: "error" });
  } catch (error) {
    const reason = messageOf(error);
    throw invalid(`${source} has front matter that is not valid YAML (${reason}): fix the YAML`, {
      cause: error,
    });
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw invalid(
      `${source} has front matter that is not a YAML mapping: write "key: value" lines with at ` +
        `least "name" and "description"`,
    );
  }
  const record = data as Record<string, unknown>;

  const name = record.name;
  if (typeof name !== "string" || !SKILL_NAME_PATTERN.test(name)) {
    const shown = name === undefined ? "is missing" : `${preview(name)} is invalid`;
    throw invalid(
      `${source}: front matter "name" ${shown}: use 1-64 lower-case letters, digits and "-", ` +
        `starting with a letter or digit (${SKILL_NAME_PATTERN})`,
      { field: "name" },
    );
  }

  const rawDescription = record.description;
  const description = typeof rawDescription === "string" ? rawDescription.trim() : undefined;
  if (description === undefined || description === "") {
    const shown =
      rawDescription === undefined ? "is missing" : `${preview(rawDescription)} is invalid`;
    throw invalid(
      `${source}: front matter "description" ${shown}: write a non-empty text saying what the ` +
        "skill is for and when to use it",
      { field: "description" },
    );
  }
  const length = [...description].length;
  if (length > MAX_SKILL_DESCRIPTION_LENGTH) {
    throw invalid(
      `${source}: front matter "description" is ${length} characters long: shorten it to at ` +
        `most ${MAX_SKILL_DESCRIPTION_LENGTH} and move the details into the body`,
      { field: "description" },
    );
  }

  return { name, description, body: lines.slice(end + 1).join("\n") };
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function invalid(message: string, options: { field?: string; cause?: unknown } = {}) {
  return new SubagentGraphError(ErrorCode.InvalidSkill, message, options);
}
