import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { ScriptedCall, ScriptStep } from "../../models/scripted.js";
import { readThreadState } from "../../threads/thread-state.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const OUTPUTS = "/home/gem/user-data/outputs";
const UPLOADS = "/home/gem/user-data/uploads";
const WORKSPACE = "/home/gem/user-data/workspace";
const SKILLS = "/home/gem/skills";

const call = (name: string, args: Record<string, unknown>) => ({ name, args });
const taskCall = (subagent_type: string, description: string) =>
  call("task", { description, subagent_type });

/** The ToolMessages answering the model's last turn, in call order. */
function lastToolReplies(scripted: ScriptedCall, count: number): ToolMessage[] {
  return scripted.messages.slice(-count) as ToolMessage[];
}

function skillFiles(name: string, description: string, body = "Follow these steps.") {
  return { "SKILL.md": `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n` };
}

/** File scopes through the runtime: uploads, outputs, workspaces and skills, per saver. */
export function runFileScopesSuite(saver: SaverKindUnderTest): void {
  describe(`file scopes on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());
    const model = (name: string, steps: ScriptStep[]) => harness.model(name, steps);

    it("lets a child read the parent's upload and hands its outputs back to the parent", async () => {
      const { runtime } = await harness.delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("worker", "summarise the brief")] } },
          {
            expect: (scripted) => {
              const [task] = lastToolReplies(scripted, 1);
              expect(task?.content).toBe("summary written");
            },
            reply: {
              toolCalls: [
                call("read_file", { path: `${OUTPUTS}/summary.md` }),
                call("ls", { path: OUTPUTS }),
              ],
            },
          },
          {
            expect: (scripted) => {
              const [read, listing] = lastToolReplies(scripted, 2);
              expect(read?.content).toContain("1\tSummary of: tides are caused by the moon");
              expect(listing?.content).toContain(`file  ${OUTPUTS}/summary.md`);
            },
            reply: { text: "done" },
          },
        ],
        {
          worker: [
            { reply: { toolCalls: [call("read_file", { path: `${UPLOADS}/brief.txt` })] } },
            {
              expect: (scripted) => {
                const [read] = lastToolReplies(scripted, 1);
                expect(read?.status).toBe("success");
                expect(read?.content).toContain("tides are caused by the moon");
              },
              reply: {
                toolCalls: [
                  call("write_file", {
                    path: `${OUTPUTS}/summary.md`,
                    content: "Summary of: tides are caused by the moon\n",
                  }),
                  // Uploads are read-only to agents: the refusal does not count as an artifact.
                  call("write_file", { path: `${UPLOADS}/brief.txt`, content: "overwritten" }),
                ],
              },
            },
            {
              expect: (scripted) => {
                const [written, refused] = lastToolReplies(scripted, 2);
                expect(written?.status).toBe("success");
                expect(refused?.status).toBe("error");
                expect(refused?.content).toContain("path refused (read-only)");
              },
              reply: { text: "summary written" },
            },
          ],
        },
      );
      const upload = await runtime.files.upload(
        "alice",
        "t-files",
        "brief.txt",
        "tides are caused by the moon\n",
        { agent: "boss" },
      );
      expect(upload).toMatchObject({ path: `${UPLOADS}/brief.txt`, size: 29 });

      const result = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-files",
        input: "go",
      });

      expect(result.subagentRuns[0]?.artifacts).toEqual([`${OUTPUTS}/summary.md`]);
      // The record survives the saver's round trip with its artifacts.
      const stored = await readThreadState(runtime.checkpointer, "t-files");
      expect(stored.subagentRuns[0]?.artifacts).toEqual([`${OUTPUTS}/summary.md`]);
      const listed = await runtime.files.list("alice", "t-files");
      expect(listed.map((entry) => entry.path)).toEqual([`${OUTPUTS}/summary.md`]);
      const content = await runtime.files.read("alice", "t-files", `${OUTPUTS}/summary.md`);
      expect(content.toString()).toBe("Summary of: tides are caused by the moon\n");
      const brief = await runtime.files.read("alice", "t-files", `${UPLOADS}/brief.txt`);
      expect(brief.toString()).toBe("tides are caused by the moon\n");
      harness.assertScriptsComplete();
    });

    it("keeps several children's parallel writes, each listed in its own record", async () => {
      const slugs = ["w1", "w2", "w3"];
      const children = Object.fromEntries(
        slugs.map((slug) => [
          slug,
          [
            {
              reply: {
                toolCalls: [
                  call("write_file", {
                    path: `${OUTPUTS}/parts/${slug}.txt`,
                    content: `part written by ${slug}\n`.repeat(200),
                  }),
                ],
              },
            },
            { reply: { text: `${slug} done` } },
          ] satisfies ScriptStep[],
        ]),
      );
      const { runtime } = await harness.delegatingBoss(
        [
          { reply: { toolCalls: slugs.map((slug) => taskCall(slug, `write part ${slug}`)) } },
          { reply: { text: "all parts written" } },
        ],
        children,
      );

      const result = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-par",
        input: "go",
      });

      expect(
        result.subagentRuns.map((run) => [run.subagent_type, run.status, run.artifacts]),
      ).toEqual(slugs.map((slug) => [slug, "completed", [`${OUTPUTS}/parts/${slug}.txt`]]));
      const listed = await runtime.files.list("alice", "t-par");
      expect(listed.map((entry) => entry.path)).toEqual(
        slugs.map((slug) => `${OUTPUTS}/parts/${slug}.txt`),
      );
      for (const slug of slugs) {
        const text = (
          await runtime.files.read("alice", "t-par", `${OUTPUTS}/parts/${slug}.txt`)
        ).toString();
        expect(text).toBe(`part written by ${slug}\n`.repeat(200));
      }
      harness.assertScriptsComplete();
    });

    it("gives parent and child each only their own skills", async () => {
      const main = model("main", [
        {
          expect: (scripted) => {
            expect(scripted.system).toContain(
              `- house-style: How we write. (${SKILLS}/house-style/SKILL.md)`,
            );
            expect(scripted.system).not.toContain("field-notes");
          },
          reply: {
            toolCalls: [
              call("ls", { path: SKILLS }),
              call("read_file", { path: `${SKILLS}/field-notes/SKILL.md` }),
            ],
          },
        },
        {
          expect: (scripted) => {
            const [listing, read] = lastToolReplies(scripted, 2);
            expect(listing?.content).toContain(`dir   ${SKILLS}/house-style/`);
            expect(listing?.content).not.toContain("field-notes");
            expect(read?.status).toBe("error");
            expect(read?.content).toContain("no such file or folder");
          },
          reply: { toolCalls: [taskCall("scout", "take notes")] },
        },
        { reply: { text: "ok" } },
      ]);
      const scout = model("scout", [
        {
          expect: (scripted) => {
            expect(scripted.system).toContain(
              `- field-notes: How to take notes. (${SKILLS}/field-notes/SKILL.md)`,
            );
            expect(scripted.system).not.toContain("house-style");
          },
          reply: {
            toolCalls: [
              call("ls", { path: SKILLS }),
              call("read_file", { path: `${SKILLS}/field-notes/SKILL.md` }),
              call("read_file", { path: `${SKILLS}/house-style/SKILL.md` }),
              call("write_file", { path: `${SKILLS}/field-notes/SKILL.md`, content: "tampered" }),
            ],
          },
        },
        {
          expect: (scripted) => {
            const [listing, own, parents, write] = lastToolReplies(scripted, 4);
            expect(listing?.content).toContain(`dir   ${SKILLS}/field-notes/`);
            expect(listing?.content).not.toContain("house-style");
            expect(own?.content).toContain("Write it down.");
            expect(parents?.status).toBe("error");
            expect(write?.content).toContain("path refused (read-only)");
          },
          reply: { text: "notes taken" },
        },
      ]);
      const runtime = await harness.setup({ "scripted:main": main, "scripted:scout": scout });
      await runtime.skills.installFiles(skillFiles("house-style", "How we write."));
      await runtime.skills.installFiles(
        skillFiles("field-notes", "How to take notes.", "Write it down."),
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("scout", "scripted:scout", { skills: ["field-notes"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["scout"], { skills: ["house-style"] }),
      );

      await runtime.run({ uid: "alice", agent: "boss", threadId: "t-skills", input: "go" });

      // The library copy is untouched by the refused write.
      const dataDir = harness.fixture?.dataDir ?? "";
      expect(readFileSync(join(dataDir, "skills", "field-notes", "SKILL.md"), "utf8")).toContain(
        "Write it down.",
      );
      harness.assertScriptsComplete();
    });

    it("refreshes a main agent's skills every turn, keeps them through the turn, and adds no graph step", async () => {
      let runtime: Awaited<ReturnType<typeof harness.setup>> | undefined;
      const main = model("main", [
        {
          expect: (scripted) => expect(scripted.system).not.toContain("late-notes"),
          reply: { text: "first" },
        },
        {
          // Installed between the turns: the main agent sees it at the next one.
          expect: (scripted) => expect(scripted.system).toContain("- late-notes: Added later."),
          reply: { toolCalls: [taskCall("scout", "take notes")] },
        },
        {
          // Removed while the child ran, in the middle of this turn: the turn keeps its skills.
          expect: (scripted) => expect(scripted.system).toContain("- late-notes: Added later."),
          reply: { text: "ok" },
        },
        {
          // The next turn sees the removal.
          expect: (scripted) => expect(scripted.system).not.toContain("late-notes"),
          reply: { text: "third" },
        },
        {
          // A replay of that turn is a run of its own: it sees what is installed now.
          expect: (scripted) => expect(scripted.system).toContain("- replay-notes: For replays."),
          reply: { text: "third, replayed" },
        },
      ]);
      const scout = model("scout", [
        {
          // Prepared at the child's first model call (default-all skills).
          expect: (scripted) => expect(scripted.system).toContain("- late-notes: Added later."),
          hold: async () => {
            expect(await runtime?.skills.remove("late-notes")).toBe(true);
          },
          reply: { text: "notes taken" },
        },
      ]);
      runtime = await harness.setup({ "scripted:main": main, "scripted:scout": scout });
      await runtime.agents.create("alice", subagentPayload("scout", "scripted:scout"));
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["scout"]));
      const turn = (input: string) =>
        runtime?.run({ uid: "alice", agent: "boss", threadId: "t-late", input });

      await turn("hi");
      await runtime.skills.installFiles(skillFiles("late-notes", "Added later."));
      const second = await turn("go");
      await turn("again");
      await runtime.skills.installFiles(skillFiles("replay-notes", "For replays."));
      const history = await runtime.history("alice", "t-late");
      const beforeThird = history.find(
        (checkpoint) => checkpoint.source === "loop" && checkpoint.messages.length === 7,
      );
      expect(beforeThird?.messages.at(-1)?.content).toBe("again");
      const replayed = await runtime.run({
        uid: "alice",
        threadId: "t-late",
        checkpointId: beforeThird?.checkpointId ?? "",
      });
      expect(replayed.output).toBe("third, replayed");

      // Which graph nodes ran, from the channels their triggers left in the checkpoints: the
      // skills are prepared inside the model call, so neither agent has a step for them.
      const channelsOf = async (threadId: string) => {
        const channels = new Set<string>();
        for await (const tuple of runtime.checkpointer.list({
          configurable: { thread_id: threadId },
        })) {
          for (const channel of Object.keys(tuple.checkpoint.channel_versions))
            channels.add(channel);
        }
        return [...channels];
      };
      const child = second?.subagentRuns[0]?.child_thread_id ?? "";
      expect(child).not.toBe("");
      for (const thread of ["t-late", child]) {
        const channels = await channelsOf(thread);
        expect(channels).toContain("branch:to:model_request");
        expect(channels.filter((channel) => channel.includes("FileScope"))).toEqual([]);
      }
      harness.assertScriptsComplete();
    });

    it("fails a run whose agent lists a skill that is not installed, naming it", async () => {
      const main = model("main", []);
      const runtime = await harness.setup({ "scripted:main": main });
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, { skills: ["ghost"] }),
      );

      await expect(runtime.run({ uid: "alice", agent: "boss", input: "go" })).rejects.toMatchObject(
        { code: ErrorCode.UnknownSkill, message: expect.stringContaining('"ghost"') },
      );
      harness.assertScriptsComplete();
    });

    it("isolates two users' workspaces", async () => {
      const alice = model("alice-model", [
        {
          reply: {
            toolCalls: [
              call("write_file", { path: `${WORKSPACE}/secret.txt`, content: "alice only" }),
            ],
          },
        },
        { reply: { text: "saved" } },
      ]);
      const bob = model("bob-model", [
        {
          reply: {
            toolCalls: [
              call("ls", { path: WORKSPACE }),
              call("read_file", { path: `${WORKSPACE}/secret.txt` }),
              call("grep", { pattern: "alice", path: WORKSPACE }),
            ],
          },
        },
        {
          expect: (scripted) => {
            const [listing, read, grep] = lastToolReplies(scripted, 3);
            expect(listing?.content).toContain("empty");
            expect(read?.status).toBe("error");
            expect(grep?.content).toContain("no matches");
            for (const reply of [listing, read, grep]) {
              expect(String(reply?.content)).not.toContain("alice only");
            }
          },
          reply: { text: "nothing there" },
        },
      ]);
      const runtime = await harness.setup({ "scripted:alice": alice, "scripted:bob": bob });
      await runtime.agents.create("alice", mainAgentPayload("mine", "scripted:alice", undefined));
      await runtime.agents.create("bob", mainAgentPayload("mine", "scripted:bob", undefined));

      await runtime.run({ uid: "alice", agent: "mine", threadId: "t-a", input: "save" });
      await runtime.run({ uid: "bob", agent: "mine", threadId: "t-b", input: "look" });

      const dataDir = harness.fixture?.dataDir ?? "";
      expect(readFileSync(join(dataDir, "users", "alice", "workspace", "secret.txt"), "utf8")).toBe(
        "alice only",
      );
      expect(existsSync(join(dataDir, "users", "bob", "workspace", "secret.txt"))).toBe(false);
      harness.assertScriptsComplete();
    });

    it("keeps a thread's files to its owner and checks names and sizes", async () => {
      const runtime = await harness.setup({}, { runtime: { maxUploadBytes: 16 } });
      await runtime.agents.create("alice", mainAgentPayload("boss", "offline", undefined));
      await runtime.agents.create("bob", mainAgentPayload("boss", "offline", undefined));
      await runtime.files.upload("alice", "t-own", "a.txt", "hello", { agent: "boss" });

      for (const attempt of [
        () => runtime.files.list("bob", "t-own"),
        () => runtime.files.read("bob", "t-own", `${UPLOADS}/a.txt`),
        () => runtime.files.upload("bob", "t-own", "b.txt", "x", { agent: "boss" }),
      ]) {
        await expect(attempt()).rejects.toMatchObject({ code: ErrorCode.NotFound });
      }
      await expect(runtime.files.upload("alice", "t-own", "../a.txt", "x")).rejects.toMatchObject({
        code: ErrorCode.PathRefused,
      });
      await expect(
        runtime.files.upload("alice", "t-own", `${OUTPUTS}/x.txt`, "x"),
      ).rejects.toMatchObject({ code: ErrorCode.Validation, field: "name" });
      await expect(
        runtime.files.upload("alice", "t-own", "big.txt", "x".repeat(17)),
      ).rejects.toMatchObject({ code: ErrorCode.TooLarge });
      await expect(runtime.files.read("alice", "t-own", "/etc/passwd")).rejects.toMatchObject({
        code: ErrorCode.PathRefused,
      });
      // Nothing half-written: only the first upload is there.
      expect((await runtime.files.list("alice", "t-own", UPLOADS)).map((e) => e.path)).toEqual([
        `${UPLOADS}/a.txt`,
      ]);
    });
  });
}
