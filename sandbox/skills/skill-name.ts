/**
 * Skill names.
 *
 * A skill's name is also the name of its folder in the skill library and in every agent's skills
 * scope, so it must be a safe single path component: lower-case letters, digits and `-`, starting
 * with a letter or digit (which rules out `.`, `..` and hidden names), at most 64 characters.
 */

import { ErrorCode, SubagentGraphError } from "../../errors.js";

/** What a skill name looks like: 1-64 of `a-z`, `0-9`, `-`, not starting with `-`. */
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/**
 * Throws unless `name` is a valid skill name.
 *
 * @param field The payload field (dotted path) the name came from, for the error's `field`.
 * @throws SubagentGraphError `INVALID_SKILL` naming the field, the bad value and the pattern.
 */
export function assertSkillName(name: string, field: string): void {
  // The typeof check guards callers that pass values straight from parsed JSON or YAML.
  if (typeof name === "string" && SKILL_NAME_PATTERN.test(name)) return;
  throw new SubagentGraphError(
    ErrorCode.InvalidSkill,
    `${field} ${JSON.stringify(name) ?? String(name)} is not a valid skill name: use 1-64 ` +
      `lower-case letters, digits and "-", starting with a letter or digit (${SKILL_NAME_PATTERN})`,
    { field },
  );
}
