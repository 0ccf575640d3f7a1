import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ScriptedCall, ScriptedChatModel } from "../../models/scripted.js";
import { messageText } from "../../util/message-text.js";
import { axeViolations } from "../support/axe.js";
import {
  ARTIFACTS_DIR,
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
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

/**
 * Requests for approval in the console, in Chromium against a real server (README "Approvals"):
 * a main agent's gated call and two subagents paused in one turn, each answered from its card
 * (approve, edit, reject) after a reload, with the browser's and the server's refusals shown on
 * the card.
 */

const UID = "dana";
/** What the `note` tool was run with, in order: the test's proof that it ran, and how often. */
const noted: string[] = [];
const note = tool(
  async ({ text }: { text: string }) => {
    noted.push(text);
    return `noted: ${text}`;
  },
  {
    name: "note",
    description: "Writes a note.",
    schema: z.object({ text: z.string().min(1) }),
  },
);

/** The task a writer child was given: its first (human) message. */
const taskOf = (call: ScriptedCall) => messageText(call.messages[0] as BaseMessage).trim();

const main = new ScriptedChatModel("main", [
  { reply: { toolCalls: [{ name: "note", args: { text: "buy milk" } }] } },
  {
    expect: (call) =>
      expect(messageText(call.messages.at(-1) as BaseMessage)).toBe("noted: buy milk"),
    reply: { text: "Noted: buy milk." },
  },
  {
    reply: {
      toolCalls: [
        { name: "task", args: { subagent_type: "writer", description: "first note" } },
        { name: "task", args: { subagent_type: "writer", description: "second note" } },
      ],
    },
  },
  { reply: { text: "Both writers are done." } },
]);
const writer = new ScriptedChatModel("writer", [
  { reply: (call) => ({ toolCalls: [{ name: "note", args: { text: taskOf(call) } }] }) },
  { reply: (call) => ({ toolCalls: [{ name: "note", args: { text: taskOf(call) } }] }) },
  { reply: (call) => ({ text: `finished ${taskOf(call)}` }) },
  { reply: (call) => ({ text: `finished ${taskOf(call)}` }) },
]);

describe("web console in Chromium: requests for approval", () => {
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
      models: { "scripted:main": main, "scripted:writer": writer },
      runtime: { tools: [note] },
    });
    const { runtime } = harness;
    await runtime.agents.create(UID, {
      ...subagentPayload("writer", "scripted:writer", {
        tools: ["note"],
        interrupt_on: {
          note: {
            allowed_decisions: ["approve", "edit", "reject"],
            description: "Writes into the shared notes",
          },
        },
      }),
      name: "Note Writer",
    });
    await runtime.agents.create(UID, {
      ...mainAgentPayload("clerk", "scripted:main", ["writer"], {
        tools: ["note"],
        interrupt_on: { note: true },
      }),
      name: "Clerk",
      is_default: true,
    });
    session = await openSession(harness.browser, harness.base);
    await signInWithToken(session, harness.token(UID));
  }, 180_000);

  afterAll(async () => {
    await session?.context.close().catch(() => {});
    await harness?.close();
  }, 60_000);

  const approvalCards = () => page().locator("[data-approval-card]");
  const cardOf = (text: string): Locator => approvalCards().filter({ hasText: text });
  const subagentCard = (task: string) =>
    page().locator("[data-subagent-card]").filter({ hasText: task });
  const messageBox = () => page().getByLabel("Message", { exact: true });
  const assistantMessage = (text: string) =>
    page().locator('[data-message-role="assistant"]').filter({ hasText: text });

  const audit = async (name: string) => {
    const violations = await axeViolations(page());
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  };

  /** At each size, the page is no wider than the viewport (cards wrap, code scrolls). */
  async function fitsAt(name: string) {
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page().setViewportSize(size);
      await approvalCards().first().scrollIntoViewIfNeeded();
      const scroll = await page().evaluate<number>("document.documentElement.scrollWidth");
      expect({ size: size.width, scroll }).toEqual({ size: size.width, scroll: size.width });
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      await page().screenshot({ path: join(ARTIFACTS_DIR, `${name}-${size.width}.png`) });
    }
    await page().setViewportSize({ width: 1280, height: 900 });
  }

  /** Loads the chat page afresh on `hash` (a hash change alone would not reload it). */
  async function reloadAt(hash: string) {
    await page().goto(`/${hash}`);
    await page().reload();
    await messageBox().waitFor();
  }

  async function startConversation(text: string): Promise<string> {
    await reloadAt("#/chat");
    await page()
      .getByLabel("Agent", { exact: true })
      .locator("option", { hasText: "Clerk" })
      .waitFor({ state: "attached" });
    await messageBox().fill(text);
    await page().getByRole("button", { name: "Send", exact: true }).click();
    let id = "";
    await waitUntil("a thread in the address", () => {
      id = decodeURIComponent(page().url().split("#/chat/")[1] ?? "");
      return id !== "";
    });
    return `#/chat/${encodeURIComponent(id)}`;
  }

  it("a main agent's gated call: the card survives a reload, refusals show on it, Approve runs the tool", async () => {
    await withArtifacts(ui(), "approvals-main", async () => {
      const hash = await startConversation("Remember to buy milk");
      const card = cardOf("Clerk");
      await card.waitFor();
      await waitForText(card.getByRole("heading"), "Approval needed: Clerk");
      await waitForText(card.locator("pre"), '"text": "buy milk"');
      // langchain's default description only repeats the tool and its arguments: not shown.
      expect(await card.locator(".approval-description").count()).toBe(0);
      expect(noted).toEqual([]);
      // A new message would be refused by the server: the page says what to do instead.
      await page().getByRole("status").filter({ hasText: "Waiting for your approval" }).waitFor();
      expect(await page().getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(
        true,
      );

      await reloadAt(hash);
      await card.waitFor();
      await waitForText(card.locator("pre"), '"text": "buy milk"');
      await page()
        .locator('li[data-thread-id][data-waiting="true"]')
        .filter({ hasText: "Remember to buy milk" })
        .waitFor();

      // Edit: arguments that are not JSON are refused in the page, before anything is sent.
      await card.getByRole("button", { name: "Edit", exact: true }).click();
      const editor = card.getByLabel("Arguments of note (JSON)");
      await editor.fill('{"text": ');
      await card.getByRole("button", { name: "Send edited call" }).click();
      await waitForText(card.getByRole("alert"), "The arguments of note are not valid JSON");
      expect(await editor.getAttribute("aria-invalid")).toBe("true");
      await audit("chat with an approval card being edited");
      await fitsAt("chat-approval-edit");

      // Valid JSON the tool's schema refuses: the server's 422 shows on the card, which stays.
      await editor.fill('{"text": 3}');
      await card.getByRole("button", { name: "Send edited call" }).click();
      await waitForText(card.getByRole("alert"), 'do not fit tool "note"');
      expect(await editor.inputValue()).toBe('{"text": 3}');
      expect(noted).toEqual([]);

      // Back to the call as asked, approved: the tool runs once and the turn finishes.
      await card.getByRole("button", { name: "Back", exact: true }).click();
      await card.getByRole("button", { name: "Approve", exact: true }).click();
      await assistantMessage("Noted: buy milk.").waitFor();
      await approvalCards().first().waitFor({ state: "detached" });
      expect(noted).toEqual(["buy milk"]);
      expect(await page().getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(
        true, // an empty message box
      );
      await messageBox().fill("thanks");
      // Waited for: the page takes the run as over once its follower has seen the run's end.
      await waitUntil("Send enabled for a new message", () =>
        page().getByRole("button", { name: "Send", exact: true }).isEnabled(),
      );
      await messageBox().fill("");
    });
  }, 120_000);

  it("two paused subagents: each card answers its own request, the other stays pending", async () => {
    await withArtifacts(ui(), "approvals-subagents", async () => {
      noted.length = 0;
      const hash = await startConversation("Write two notes");
      await waitUntil("two approval cards", async () => (await approvalCards().count()) === 2);
      const first = cardOf("first note");
      const second = cardOf("second note");
      await waitForText(first.getByRole("heading"), "Approval needed: Note Writer (subagent)");
      await waitForText(first, "Task: first note");
      await waitForText(first, "Writes into the shared notes");

      await reloadAt(hash);
      await waitUntil("two approval cards", async () => (await approvalCards().count()) === 2);
      // The waiting subagents' own cards say so, and lead to their requests.
      for (const task of ["first note", "second note"]) {
        await waitForText(subagentCard(task).getByRole("status"), "waiting for approval");
      }
      await subagentCard("second note")
        .getByRole("button", { name: "Go to the request for approval of Note Writer" })
        .click();
      const secondId = await second.getAttribute("data-approval-id");
      await waitUntil(
        "the second card focused",
        async () =>
          (await page().evaluate<string | null>(
            'document.activeElement?.getAttribute("data-approval-id") ?? null',
          )) === secondId,
      );
      await audit("chat with two subagents waiting for approval");
      await fitsAt("chat-approvals");

      // Reject the second with a reason: the first stays pending and answerable.
      await second.getByRole("button", { name: "Reject", exact: true }).click();
      await second.getByLabel("Why (optional, the agent reads it)").fill("one note is enough");
      await second.getByRole("button", { name: "Send rejection" }).click();
      await waitForText(subagentCard("second note").getByRole("status"), "completed");
      await second.waitFor({ state: "detached" });
      expect(await approvalCards().count()).toBe(1);
      await waitForText(subagentCard("first note").getByRole("status"), "waiting for approval");
      expect(noted).toEqual([]);

      // Edit the first one's arguments and send them: the tool runs with the edited ones.
      await first.getByRole("button", { name: "Approve", exact: true }).waitFor();
      await waitUntil("the first card answerable", () =>
        first.getByRole("button", { name: "Edit", exact: true }).isEnabled(),
      );
      await first.getByRole("button", { name: "Edit", exact: true }).click();
      await first.getByLabel("Arguments of note (JSON)").fill('{"text": "first note, edited"}');
      await first.getByRole("button", { name: "Send edited call" }).click();
      await assistantMessage("Both writers are done.").waitFor();
      expect(await approvalCards().count()).toBe(0);
      await waitForText(subagentCard("first note").getByRole("status"), "completed");
      expect(noted).toEqual(["first note, edited"]);
      expect(main.calls).toHaveLength(4);
      expect(writer.calls).toHaveLength(4);
      // The rejection reached the second writer as the tool's answer.
      const rejected = writer.calls.find(
        (call) => taskOf(call) === "second note" && call.messages.length > 2,
      );
      expect(messageText(rejected?.messages.at(-1) as BaseMessage)).toBe("one note is enough");
    });
  }, 120_000);
});
