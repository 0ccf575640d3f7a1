import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxLayout } from "../../sandbox/layout.js";
import { prepareAgentSkills } from "../../sandbox/skills/agent-skills.js";
import { SkillLibrary } from "../../sandbox/skills/library.js";

describe("prepareAgentSkills", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function setup() {
    const dataDir = mkdtempSync(join(tmpdir(), "agent-skills-"));
    dirs.push(dataDir);
    const layout = new SandboxLayout(dataDir);
    return { layout, library: new SkillLibrary(layout.skillLibrary()) };
  }

  it("creates nothing for a run without skills", async () => {
    const { layout, library } = setup();
    const skills = await prepareAgentSkills(
      library,
      layout,
      { slug: "a", skills: undefined },
      "t1",
    );
    expect(skills).toEqual([]);
    expect(existsSync(layout.skillsScope("t1"))).toBe(false);
  });

  it("copies the agent's skills in, and empties the scope when they are gone", async () => {
    const { layout, library } = setup();
    await library.installFiles({
      "SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nbody\n",
    });
    await prepareAgentSkills(library, layout, { slug: "a", skills: ["notes"] }, "t1");
    expect(readdirSync(layout.skillsScope("t1")).filter((n) => !n.startsWith("."))).toEqual([
      "notes",
    ]);

    await prepareAgentSkills(library, layout, { slug: "a", skills: [] }, "t1");
    expect(readdirSync(layout.skillsScope("t1")).filter((n) => !n.startsWith("."))).toEqual([]);
  });
});
