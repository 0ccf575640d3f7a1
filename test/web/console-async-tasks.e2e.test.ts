import { tool } from "@langchain/core/tools";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ASYNC_TASK_TOOL_NAMES } from "../../contract.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import { axeViolations } from "../support/axe.js";
import {
  type BrowserSession,
  openSession,
  waitForText,
  waitUntil,
  withArtifacts,
} from "../support/browser.js";
import {
  type ConsoleServer,
  signInWithToken,
  startConsoleServer,
} from "../support/console-server.js";
import { Gate } from "../support/gate.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

/**
 * A thread's background tasks in the console, in Chromium against a real server (README
 * "Background subagents"): one turn starts three tasks and ends; the panel lists them and
 * follows them without a reload: one completes (its full answer opens), one pauses on an
 * approval answered from its row, one is cancelled from its row; a reload reads them back.
 */

const UID = "erin";
/** What the `note` tool ran with: the proof the approved call ran, once. */
const noted: string[] = [];
const note = tool(
  async ({ text }: { text: string }) => {
    noted.push(text);
    return `noted: ${text}`;
  },
  { name: "note", description: "Writes a note.", schema: z.object({ text: z.string().min(1) }) },
);

/** Holds the researcher's answer until the panel has shown it running. */
const researcherGate = new Gate();
/** Never opened: the stargazer runs until it is cancelled (its run's signal ends the wait). */
const stargazerGate = new Gate();

const start = (subagent_type: string, description: string) => ({
  name: ASYNC_TASK_TOOL_NAMES.start,
  args: { subagent_type, description },
});
const main = new ScriptedChatModel("main", [
  {
    reply: {
      toolCalls: [
        start("researcher", "find the answer"),
        start("stargazer", "count the stars"),
        start("writer", "write hello"),
      ],
    },
  },
  { reply: { text: "Three tasks started." } },
]);
const researcher = new ScriptedChatModel("researcher", [
  { hold: (_call, signal) => researcherGate.pass(signal), reply: { text: "The answer is 42." } },
]);
const stargazer = new ScriptedChatModel("stargazer", [
  { hold: (_call, signal) => stargazerGate.pass(signal), reply: { text: "too many" } },
]);
const writer = new ScriptedChatModel("writer", [
  { reply: { toolCalls: [{ name: "note", args: { text: "hello" } }] } },
  { reply: { text: "wrote hello" } },
]);

describe("web console in Chromium: background tasks", () => {
  let harness: ConsoleServer | undefined;
  let session: BrowserSession | undefined;

  const ui = () => {
    if (!session) throw new Error("the browser did not start");
    return session;
  };
  const page = (): Page => ui().page;

  beforeAll(async () => {
    harness = await startConsoleServer({
      users: [UID],
      models: {
        "scripted:main": main,
        "scripted:researcher": researcher,
        "scripted:stargazer": stargazer,
        "scripted:writer": writer,
      },
      runtime: { tools: [note] },
    });
    const { runtime } = harness;
    await runtime.agents.create(UID, {
      ...subagentPayload("researcher", "scripted:researcher"),
      name: "Researcher",
    });
    await runtime.agents.create(UID, {
      ...subagentPayload("stargazer", "scripted:stargazer"),
      name: "Stargazer",
    });
    await runtime.agents.create(UID, {
      ...subagentPayload("writer", "scripted:writer", {
        tools: ["note"],
        interrupt_on: { note: { allowed_decisions: ["approve", "reject"] } },
      }),
      name: "Note Writer",
    });
    await runtime.agents.create(UID, {
      ...mainAgentPayload("dispatcher", "scripted:main", undefined, {
        async_subagents: ["researcher", "stargazer", "writer"],
      }),
      name: "Dispatcher",
      is_default: true,
    });
    session = await openSession(harness.browser, harness.base);
    await signInWithToken(session, harness.token(UID));
  }, 180_000);

  afterAll(async () => {
    researcherGate.release();
    stargazerGate.release();
    await session?.context.close().catch(() => {});
    await harness?.close();
  }, 60_000);

  const panel = () => page().locator("[data-async-tasks]");
  const row = (task: string): Locator =>
    page().locator("[data-async-task]").filter({ hasText: task });
  const statusOf = (task: string) => row(task).locator("header").getByRole("status");
  const messageBox = () => page().getByLabel("Message", { exact: true });

  it("lists the turn's tasks and follows them: completed with its answer, approved, cancelled", async () => {
    await withArtifacts(ui(), "async-tasks", async () => {
      await page().goto("/#/chat");
      await page()
        .getByLabel("Agent", { exact: true })
        .locator("option", { hasText: "Dispatcher" })
        .waitFor({ state: "attached" });
      // A conversation without tasks has no panel.
      expect(await panel().count()).toBe(0);
      await messageBox().fill("Start the tasks");
      await page().getByRole("button", { name: "Send", exact: true }).click();
      await page()
        .locator('[data-message-role="assistant"]')
        .filter({ hasText: "Three tasks started." })
        .waitFor();

      // The turn has ended; the tasks go on, and the panel shows each with its subagent.
      await panel().waitFor();
      await waitUntil(
        "three task rows",
        async () => (await page().locator("[data-async-task]").count()) === 3,
      );
      await waitForText(row("find the answer"), "Researcher");
      await waitForText(statusOf("find the answer"), "running");
      await waitForText(statusOf("write hello"), "waiting for approval");
      await waitForText(statusOf("count the stars"), "running");
      expect(noted).toEqual([]);
      const audit = await axeViolations(page());
      expect({ page: "chat with background tasks", violations: audit }).toEqual({
        page: "chat with background tasks",
        violations: [],
      });

      // The researcher answers: the row follows without a reload, and its answer opens whole.
      await waitUntil("the researcher's model call", () => researcherGate.reached);
      researcherGate.release();
      await waitForText(statusOf("find the answer"), "completed");
      await waitForText(row("find the answer").locator(".preview"), "The answer is 42.");
      await row("find the answer").getByText("Full answer").click();
      await waitForText(row("find the answer").locator(".markdown"), "The answer is 42.");

      // The writer's gated call, approved from its row: the tool runs once and the task ends.
      const writerRow = row("write hello");
      await waitForText(writerRow.locator("[data-approval-card]"), "note");
      await writerRow.getByRole("button", { name: "Approve", exact: true }).click();
      await waitForText(statusOf("write hello"), "completed");
      expect(noted).toEqual(["hello"]);
      expect(await writerRow.locator("[data-approval-card]").count()).toBe(0);

      // The stargazer is cancelled from its row.
      await waitUntil("the stargazer's model call", () => stargazerGate.reached);
      await row("count the stars")
        .getByRole("button", { name: "Cancel background task of Stargazer: count the stars" })
        .click();
      await waitForText(statusOf("count the stars"), "cancelled");
      expect(
        await row("count the stars")
          .getByRole("button", { name: /^Cancel background/ })
          .count(),
      ).toBe(0);
      await waitForText(panel().locator("[data-async-tasks-summary]"), "3 ended");

      // A reload reads the same from the server.
      const hash = new URL(page().url()).hash;
      await page().goto(`/${hash}`);
      await page().reload();
      await panel().waitFor();
      await waitForText(statusOf("find the answer"), "completed");
      await waitForText(statusOf("write hello"), "completed");
      await waitForText(statusOf("count the stars"), "cancelled");
      expect(main.calls).toHaveLength(2);
      expect(researcher.calls).toHaveLength(1);
      expect(stargazer.calls).toHaveLength(1);
      expect(writer.calls).toHaveLength(2);
    });
  }, 120_000);
});
