import type { Runtime } from "../runtime.js";
import { type Io, say } from "./context.js";
import { columns, oneLine } from "./text.js";

/** `skills list`: the installed skills, by name. */
export async function listSkills(runtime: Runtime, io: Io): Promise<number> {
  const skills = await runtime.skills.list();
  if (skills.length === 0) {
    say(io, 'no skills installed: add one with "skills add <folder>" (a folder with a SKILL.md)');
    return 0;
  }
  say(
    io,
    columns([
      ["NAME", "DESCRIPTION"],
      ...skills.map((skill) => [skill.name, oneLine(skill.description, 90)]),
    ]),
  );
  return 0;
}

/** `skills add <folder>`: installs (or with `--replace`, replaces) a skill folder. */
export async function addSkill(
  runtime: Runtime,
  io: Io,
  folder: string,
  replace: boolean,
): Promise<number> {
  const skill = await runtime.skills.install(folder, { replace });
  say(io, `installed skill "${skill.name}": ${oneLine(skill.description, 90)}`);
  return 0;
}

/** `skills remove <name>`. */
export async function removeSkill(runtime: Runtime, io: Io, name: string): Promise<number> {
  if (!(await runtime.skills.remove(name))) {
    io.stderr.write(`error: no skill "${name}" is installed (see "skills list")\n`);
    return 1;
  }
  say(io, `removed skill "${name}"`);
  return 0;
}
