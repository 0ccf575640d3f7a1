import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ScriptedChatModel } from "../../models/scripted.js";
import { cli } from "../support/cli.js";
import { mainAgentPayload, makeRuntime, type RuntimeFixture } from "../support/runtime-fixture.js";
import { settledFolder } from "../support/settled-folder.js";

/** A skill folder on disk, as a user writes one before `skills add`. */
function skillFolder(root: string, name: string, description: string): string {
  const folder = join(root, "sources", name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${description}\n---\nSteps.\n`,
  );
  return folder;
}

describe("skills changed by the CLI beside a running runtime", () => {
  let fixture: RuntimeFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it("shows a skill the CLI adds, and drops one it removes, at the main agent's next turn", async () => {
    const systems: string[] = [];
    const main = new ScriptedChatModel(
      "main",
      Array.from({ length: 3 }, (_, turn) => ({
        expect: (call: { system: string }) => {
          systems.push(call.system);
        },
        reply: { text: `turn ${turn + 1}` },
      })),
    );
    fixture = await makeRuntime({ models: { "scripted:main": main } });
    const { runtime, dataDir } = fixture;
    await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", []));
    await runtime.skills.install(skillFolder(dataDir, "house-style", "Write like us."));
    // Old enough for the runtime to keep its listing of the library between runs.
    await settledFolder(join(dataDir, "skills"));
    const turn = (input: string) =>
      runtime.run({ uid: "alice", agent: "boss", threadId: "t", input });

    await turn("one");
    expect(systems[0]).toContain("- house-style: Write like us.");
    expect(systems[0]).not.toContain("glossary");

    // Another process, as a user types it.
    const added = await cli([
      "skills",
      "add",
      skillFolder(dataDir, "glossary", "Our terms."),
      "--data",
      dataDir,
    ]);
    expect(added.code, added.stderr).toBe(0);
    await turn("two");
    expect(systems[1]).toContain("- glossary: Our terms.");
    expect(systems[1]).toContain("- house-style: Write like us.");

    await settledFolder(join(dataDir, "skills"));
    const removed = await cli(["skills", "remove", "house-style", "--data", dataDir]);
    expect(removed.code, removed.stderr).toBe(0);
    await turn("three");
    expect(systems[2]).toContain("- glossary: Our terms.");
    expect(systems[2]).not.toContain("house-style");
    main.assertComplete();
  });
});
