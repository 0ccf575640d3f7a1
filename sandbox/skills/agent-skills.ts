import { lstatSync } from "node:fs";
import type { SandboxLayout } from "../layout.js";
import type { SkillLibrary, SkillSummary } from "./library.js";
import { materialiseSkills } from "./materialise.js";

/**
 * An agent's skills in one run: the names its config lists (unset = every installed skill,
 * `[]` = none) resolved against the library, then copied into the run's own skills scope
 * (`threads/<skills_thread_id>/skills`, seen as `/home/gem/skills`).
 *
 * @throws SubagentGraphError `UNKNOWN_SKILL` naming the agent and the missing skills
 */
export async function prepareAgentSkills(
  library: SkillLibrary,
  layout: SandboxLayout,
  agent: { slug: string; skills: readonly string[] | undefined },
  skillsThreadId: string,
): Promise<SkillSummary[]> {
  const skills = await library.resolve(agent.skills, agent.slug);
  const scopeDir = layout.skillsScope(skillsThreadId);
  // Most runs have no skills: then a scope that was never materialised is left uncreated
  // (no folders and manifest per child thread); one that held skills before is emptied.
  if (skills.length === 0 && !exists(scopeDir)) return skills;
  await materialiseSkills(library, skills, scopeDir);
  return skills;
}

/**
 * Synchronous on purpose: this runs at the start of every agent run, and a `lstat` that finds
 * nothing takes microseconds, while an awaited one waits for the thread pool and the event loop.
 */
function exists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
