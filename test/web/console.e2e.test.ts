import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { AgentRecord } from "../../agents/schema.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import { messageText } from "../../util/message-text.js";
import {
  ARTIFACTS_DIR,
  type BrowserSession,
  openSession,
  textUnderHeading,
  waitForText,
  waitUntil,
  withArtifacts,
} from "../support/browser.js";
import { type ConsoleServer, startConsoleServer } from "../support/console-server.js";
import { Gate } from "../support/gate.js";

const UID = "alice";
const QUESTION = "What is the boiling point of water?";
const TASK_DESCRIPTION = "Find the boiling point of water at sea level";
const RESEARCH_ANSWER = "Research notes: 100 degrees Celsius at sea level.";
const FINAL_ANSWER = "Final answer: water boils at 100 °C at sea level.";
const SLOW_DESCRIPTION = "Take all the time you need";
const AFTER_CANCEL = "Still here after the cancel.";

/** The main agent's whole script, across the chat and cancel scenarios. */
const main = new ScriptedChatModel("main", [
  {
    reply: {
      toolCalls: [
        { name: "task", args: { description: TASK_DESCRIPTION, subagent_type: "researcher" } },
      ],
    },
  },
  { reply: { text: FINAL_ANSWER } },
  {
    reply: {
      toolCalls: [
        { name: "task", args: { description: SLOW_DESCRIPTION, subagent_type: "sleeper" } },
      ],
    },
  },
  { reply: { text: AFTER_CANCEL } },
]);
/** The researcher's one answer waits at this gate until the test has seen its card running. */
const researcherGate = new Gate();
const researcher = new ScriptedChatModel("researcher", [
  { reply: { text: RESEARCH_ANSWER }, hold: (_call, signal) => researcherGate.pass(signal) },
]);
/** Answers after ten minutes or when the run is aborted (the model honours the signal). */
const slow = new ScriptedChatModel("slow", [{ reply: { text: "too late" }, delayMs: 600_000 }]);

describe("web console in Chromium", () => {
  let harness: ConsoleServer | undefined;
  let session: BrowserSession | undefined;
  let base = "";
  let token = "";

  const runtime = () => {
    if (!harness) throw new Error("the runtime did not start");
    return harness.runtime;
  };
  const ui = () => {
    if (!session) throw new Error("the browser did not start");
    return session;
  };

  beforeAll(async () => {
    harness = await startConsoleServer({
      users: [UID],
      models: {
        "scripted:main": main,
        "scripted:researcher": researcher,
        "scripted:slow": slow,
      },
    });
    base = harness.base;
    token = harness.token(UID);
    session = await openSession(harness.browser, base);
  }, 180_000);

  afterAll(async () => {
    researcherGate.release();
    await harness?.close();
  }, 60_000);

  /** Signs in with the right token unless the app is already shown. */
  async function ensureSignedIn() {
    const { page } = ui();
    if (page.url() === "about:blank") await page.goto("/");
    const signOut = page.getByRole("button", { name: "Sign out", exact: true });
    const tokenInput = page.getByLabel("API token", { exact: true });
    await signOut.or(tokenInput).first().waitFor();
    if (await tokenInput.isVisible()) {
      await tokenInput.fill(token);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await signOut.waitFor();
    }
  }

  async function agentsOf(uid = UID): Promise<AgentRecord[]> {
    return runtime().agents.list(uid, { include_subagents: true });
  }

  async function openAgentsPage() {
    const { page } = ui();
    await ensureSignedIn();
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("heading", { name: "Agents", exact: true }).waitFor();
  }

  async function openChatPage() {
    const { page } = ui();
    await ensureSignedIn();
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    await page.getByLabel("Message", { exact: true }).waitFor();
  }

  const agentForm = () => ui().page.getByRole("form", { name: "Agent form" });
  const field = (label: string) => agentForm().getByLabel(label, { exact: true });
  const subagentsFieldset = () =>
    agentForm().getByRole("group", { name: "Subagents", exact: true });

  /** Saves the open agent form and waits for it to close and the row to show. */
  async function saveAgentForm(slug: string) {
    const { page } = ui();
    await agentForm().getByRole("button", { name: "Save", exact: true }).click();
    await agentForm().waitFor({ state: "hidden" });
    await page.locator(`tr[data-agent-slug="${slug}"]`).waitFor();
  }

  /** Creates a subagent through the form (the "Subagents" fieldset must then be absent). */
  async function createSubagentThroughForm(slug: string, name: string, model: string) {
    const { page } = ui();
    await page.getByRole("button", { name: "New agent", exact: true }).click();
    await agentForm().waitFor();
    await field("Backend").selectOption("SubAgentBackend");
    await subagentsFieldset().waitFor({ state: "detached" });
    await field("Slug").fill(slug);
    await field("Name").fill(name);
    await field("Description").fill(`${name}: looks things up and reports back`);
    await field("System prompt").fill(`You are ${name}.`);
    // Picked from the catalog's list (the runtime's models are in it).
    await field("Model").selectOption(model);
    expect(await subagentsFieldset().count()).toBe(0);
    await saveAgentForm(slug);
  }

  const card = (slug: string, status?: string) =>
    ui().page.locator(
      `[data-subagent-card][data-subagent-slug="${slug}"]${status ? `[data-status="${status}"]` : ""}`,
    );
  const cancelButton = () => ui().page.getByRole("button", { name: "Cancel", exact: true });
  const assistantMessage = (text: string) =>
    ui().page.locator('[data-message-role="assistant"]').filter({ hasText: text });

  async function send(text: string) {
    const { page } = ui();
    await page.getByLabel("Message", { exact: true }).fill(text);
    await page.getByRole("button", { name: "Send", exact: true }).click();
  }

  it("signs in: a wrong token is refused with an alert, the right one shows the app", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "sign-in", async () => {
      await page.goto("/");
      const tokenInput = page.getByLabel("API token", { exact: true });
      await tokenInput.fill("sgk_not-a-real-token");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      const alert = page.getByRole("alert").filter({ hasText: /token/i });
      await alert.first().waitFor();
      expect(((await alert.first().textContent()) ?? "").toLowerCase()).toContain("token");
      expect(await page.getByRole("button", { name: "Sign out", exact: true }).count()).toBe(0);

      await tokenInput.fill(token);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
      await page.getByRole("link", { name: "Agents", exact: true }).waitFor();
      await page.getByRole("link", { name: "Chat", exact: true }).waitFor();
      expect(await page.getByLabel("API token", { exact: true }).count()).toBe(0);
      expect(
        await page.evaluate<string | null>('localStorage.getItem("subagent-graph.token")'),
      ).toBe(token);
    });
  }, 60_000);

  it("creates a subagent and a main agent that may call it", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "agents", async () => {
      await openAgentsPage();
      await createSubagentThroughForm("researcher", "Researcher", "scripted:researcher");
      const researcherRow = page.locator('tr[data-agent-slug="researcher"]');
      await researcherRow.getByText("Subagent", { exact: true }).waitFor();
      await waitForText(researcherRow, "Researcher");

      await page.getByRole("button", { name: "New agent", exact: true }).click();
      await agentForm().waitFor();
      await field("Backend").selectOption("ChatAgentBackend");
      await subagentsFieldset().waitFor();
      await field("Slug").fill("boss");
      await field("Name").fill("Boss");
      await field("Description").fill("Answers questions, delegating research");
      await field("Model").selectOption("scripted:main");
      await field("Default agent").check();
      // The built-in is offered next to the user's subagents.
      await subagentsFieldset()
        .getByRole("checkbox", { name: "general-purpose", exact: true })
        .waitFor();
      await subagentsFieldset().getByRole("checkbox", { name: "Researcher", exact: true }).check();
      await saveAgentForm("boss");
      const bossRow = page.locator('tr[data-agent-slug="boss"]');
      await waitForText(bossRow, "Boss");
      expect(await bossRow.getByText("Subagent", { exact: true }).count()).toBe(0);

      const agents = await agentsOf();
      const saved = agents.find((agent) => agent.slug === "boss");
      expect(saved?.backend_id).toBe("ChatAgentBackend");
      expect(saved?.is_default).toBe(true);
      expect(saved?.config_json.context.model).toBe("scripted:main");
      expect(saved?.config_json.context.subagents).toEqual(["researcher"]);
      const sub = agents.find((agent) => agent.slug === "researcher");
      expect(sub?.backend_id).toBe("SubAgentBackend");
      expect(sub?.is_subagent).toBe(true);
      expect(sub?.name).toBe("Researcher");
      expect(sub?.config_json.context.model).toBe("scripted:researcher");

      // Switching an open form to a subagent removes the fieldset.
      await page.getByRole("button", { name: "New agent", exact: true }).click();
      await field("Backend").selectOption("ChatAgentBackend");
      await subagentsFieldset().waitFor();
      await field("Backend").selectOption("SubAgentBackend");
      await subagentsFieldset().waitFor({ state: "detached" });
      await agentForm().getByRole("button", { name: "Cancel", exact: true }).click();
      await agentForm().waitFor({ state: "hidden" });
    });
  }, 90_000);

  it("shows the API's 422 next to the field, in view, and keeps the form open", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "agent-422", async () => {
      await openAgentsPage();
      // What the API says about the same model, asked directly (nothing is created).
      const direct = await fetch(`${base}/api/agent`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          slug: "bad-model",
          name: "Bad model",
          config_json: { context: { model: "nosuch:model" } },
        }),
      });
      expect(direct.status).toBe(422);
      const refusal = ((await direct.json()) as { error: { field?: string; message: string } })
        .error;
      expect(refusal.field).toBe("config_json.context.model");
      expect(refusal.message).toContain('"nosuch:model"');

      await page.getByRole("button", { name: "New agent", exact: true }).click();
      await agentForm().waitFor();
      // A subagent is never the default: the box is not offered for one.
      await field("Backend").selectOption("SubAgentBackend");
      expect(await field("Default agent").count()).toBe(0);
      await field("Backend").selectOption("ChatAgentBackend");
      await field("Default agent").waitFor();
      // The "none ticked" hint shows only while none is ticked.
      const noneHint = subagentsFieldset().getByText("None ticked", { exact: false });
      await noneHint.waitFor();
      await subagentsFieldset().getByRole("checkbox", { name: "Researcher", exact: true }).check();
      expect(await noneHint.count()).toBe(0);
      await subagentsFieldset()
        .getByRole("checkbox", { name: "Researcher", exact: true })
        .uncheck();
      await noneHint.waitFor();

      await field("Slug").fill("bad-model");
      await field("Name").fill("Bad model");
      await field("Model").selectOption({ label: "Other…" });
      await field("Model spec").fill("nosuch:model");
      // Saved from the bottom of a form taller than the window: the error near the top must
      // come into view.
      await page.setViewportSize({ width: 1280, height: 500 });
      onTestFinished(() => page.setViewportSize({ width: 1280, height: 900 }));
      const save = agentForm().getByRole("button", { name: "Save", exact: true });
      await save.scrollIntoViewIfNeeded();
      await save.click();
      const error = agentForm().locator('[data-error-for="model"]');
      await waitForText(error, refusal.message);
      await waitUntil("the model error in the viewport", async () => {
        const box = await error.boundingBox();
        const height = page.viewportSize()?.height ?? 0;
        return box !== null && box.y >= 0 && box.y + box.height <= height;
      });
      expect(await agentForm().isVisible()).toBe(true);
      expect((await agentsOf()).map((agent) => agent.slug).sort()).toEqual(["boss", "researcher"]);
      expect(await page.locator('tr[data-agent-slug="bad-model"]').count()).toBe(0);

      await agentForm().getByRole("button", { name: "Cancel", exact: true }).click();
      await agentForm().waitFor({ state: "hidden" });
    });
  }, 60_000);

  it("a version conflict's error is brought into view", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "agent-conflict", async () => {
      await openAgentsPage();
      await page.getByRole("button", { name: "Edit Researcher", exact: true }).click();
      await agentForm().waitFor();
      // Someone else changes the agent while the form is open.
      const researcherRecord = (await agentsOf()).find((agent) => agent.slug === "researcher");
      if (!researcherRecord) throw new Error("no researcher");
      await runtime().agents.update(UID, researcherRecord.id, {
        description: "changed elsewhere",
        expected_version: researcherRecord.version,
      });
      await field("Name").fill("Researcher");
      await page.setViewportSize({ width: 1280, height: 500 });
      onTestFinished(() => page.setViewportSize({ width: 1280, height: 900 }));
      const save = agentForm().getByRole("button", { name: "Save", exact: true });
      await save.scrollIntoViewIfNeeded();
      await save.click();
      const alert = agentForm().getByRole("alert");
      await waitForText(alert, "reload the agent");
      await waitUntil("the conflict in the viewport", async () => {
        const box = await alert.boundingBox();
        const height = page.viewportSize()?.height ?? 0;
        return box !== null && box.y >= 0 && box.y + box.height <= height;
      });
      await agentForm().getByRole("button", { name: "Cancel", exact: true }).click();
      await agentForm().waitFor({ state: "hidden" });
    });
  }, 60_000);

  it("chats: the subagent's card runs, completes, and opens its thread", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "chat", async () => {
      await openChatPage();
      const agentSelect = page.getByLabel("Agent", { exact: true });
      // The agents load after the page shows.
      await agentSelect.locator("option", { hasText: "Boss" }).waitFor({ state: "attached" });
      const options = (await agentSelect.locator("option").allTextContents()).map((text) =>
        text.trim(),
      );
      expect(options).toContain("Boss");
      expect(options).not.toContain("Researcher");
      await agentSelect.selectOption({ label: "Boss" });

      await send(QUESTION);
      await page.locator('[data-message-role="human"]').filter({ hasText: QUESTION }).waitFor();
      // The researcher's answer is held at its gate: the card must show it running first.
      await card("researcher", "running").waitFor();
      await waitUntil("the researcher's model call", () => researcherGate.reached);
      // Held: the researcher's call has arrived and has not answered.
      expect(researcher.calls.map((call) => call.finishedAt)).toEqual([undefined]);
      const runningCancel = cancelButton();
      await runningCancel.waitFor();
      expect(await runningCancel.isEnabled()).toBe(true);
      researcherGate.release();

      await card("researcher", "completed").waitFor();
      await waitForText(card("researcher"), "Rounds: 1");
      // The card names the subagent by its name, not its slug.
      await waitForText(card("researcher").locator("header"), "Researcher");
      await assistantMessage(FINAL_ANSWER).waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      // The researcher's own answer streamed onto its card (the SDK's stream manager put its
      // tools:<task id> events there), and is no message of the main conversation.
      await card("researcher")
        .locator('[data-subagent-message="assistant"]')
        .filter({ hasText: RESEARCH_ANSWER })
        .waitFor({ state: "attached" });
      const mainTexts = await page
        .locator('ol.messages > li[data-message-role="assistant"] > .text')
        .allTextContents();
      expect(mainTexts.map((text) => text.trim())).toEqual([FINAL_ANSWER]);
      expect(researcher.calls).toHaveLength(1);
      // The subagent's answer reached the main model as the task's result.
      expect(main.calls).toHaveLength(2);
      expect(messageText(main.calls[1]?.messages.at(-1) as BaseMessage)).toContain(RESEARCH_ANSWER);

      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS_DIR, "console-chat.png"), fullPage: true });

      await card("researcher")
        .getByRole("button", { name: /^Open thread/ })
        .click();
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("heading", { name: /^Subagent thread/ }).waitFor();
      await dialog
        .locator('[data-message-role="human"]')
        .filter({ hasText: TASK_DESCRIPTION })
        .waitFor();
      await dialog
        .locator('[data-message-role="assistant"]')
        .filter({ hasText: RESEARCH_ANSWER })
        .waitFor();
      await dialog.getByRole("button", { name: "Close", exact: true }).click();
      await dialog.waitFor({ state: "hidden" });
    });
  }, 90_000);

  it("cancels a run whose subagent is slow, then takes the next message", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "cancel", async () => {
      // A second subagent, added to the main agent by editing it.
      await openAgentsPage();
      await createSubagentThroughForm("sleeper", "Sleeper", "scripted:slow");
      await page.getByRole("button", { name: "Edit Boss", exact: true }).click();
      await agentForm().waitFor();
      expect(await field("Slug").inputValue()).toBe("boss");
      await subagentsFieldset().getByRole("checkbox", { name: "Sleeper", exact: true }).check();
      expect(
        await subagentsFieldset()
          .getByRole("checkbox", { name: "Researcher", exact: true })
          .isChecked(),
      ).toBe(true);
      await saveAgentForm("boss");
      const boss = (await agentsOf()).find((agent) => agent.slug === "boss");
      expect([...(boss?.config_json.context.subagents ?? [])].sort()).toEqual([
        "researcher",
        "sleeper",
      ]);
      expect(boss?.version).toBe(2);

      await openChatPage();
      await page.getByRole("button", { name: "New conversation", exact: true }).click();
      await page.getByLabel("Agent", { exact: true }).selectOption({ label: "Boss" });
      await send("Please take your time");
      await card("sleeper", "running").waitFor();
      await waitUntil("the slow subagent's model call", () => slow.calls.length === 1);
      await cancelButton().click();
      await card("sleeper", "cancelled").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(slow.calls[0]?.finishedAt).toBeUndefined();

      await send("Are you still there?");
      await assistantMessage(AFTER_CANCEL).waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(await card("sleeper", "cancelled").count()).toBe(1);
    });
  }, 90_000);

  it("uploads a file into a new conversation and lists it under Uploads", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "upload", async () => {
      await openChatPage();
      // File listings answer slowly, as on a loaded server: the listing the new thread starts
      // then ends after the upload, and must not hide the uploaded file.
      let listingsInFlight = 0;
      await page.route(/\/threads\/[^/]+\/files(\?|$)/, async (route) => {
        if (route.request().method() !== "GET") return route.continue();
        listingsInFlight += 1;
        try {
          const response = await route.fetch();
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          return await route.fulfill({ response });
        } finally {
          listingsInFlight -= 1;
        }
      });
      await page.getByRole("button", { name: "New conversation", exact: true }).click();
      await page.getByLabel("Upload file", { exact: true }).setInputFiles({
        name: "notes.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("boiling points of common liquids\n"),
      });
      let listed: string | undefined;
      await waitUntil('"notes.txt" under the heading "Uploads"', async () => {
        listed = await textUnderHeading(page, "Uploads");
        return listed?.includes("notes.txt") ?? false;
      }).catch((error: Error) => {
        throw new Error(`${error.message}; text under "Uploads": ${JSON.stringify(listed)}`);
      });
      // Still listed once every listing has answered.
      await waitUntil("the file listings to answer", () => listingsInFlight === 0);
      expect(await textUnderHeading(page, "Uploads")).toContain("notes.txt");
      await page.unroute(/\/threads\/[^/]+\/files(\?|$)/);

      // The file is in the uploads of one of the user's threads.
      const uploaded: string[] = [];
      for (const thread of await runtime().threads.search(UID, { limit: 100 })) {
        const files = await runtime().files.list(
          UID,
          thread.threadId,
          "/home/gem/user-data/uploads",
        );
        uploaded.push(...files.map((file) => file.path));
      }
      expect(uploaded).toEqual(["/home/gem/user-data/uploads/notes.txt"]);
    });
  }, 60_000);

  it("deletes a subagent that a chat agent calls after one question, detaching it", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "delete-in-use", async () => {
      const nativeDialogs: string[] = [];
      const onDialog = (dialog: { message(): string; dismiss(): Promise<void> }) => {
        nativeDialogs.push(dialog.message());
        void dialog.dismiss();
      };
      page.on("dialog", onDialog);
      await openAgentsPage();
      await page.getByRole("button", { name: "Delete Sleeper", exact: true }).click();
      const question = page.getByRole("dialog");
      await question.getByRole("heading", { name: 'Delete "Sleeper"?' }).waitFor();
      await waitForText(question, "Boss calls it as a subagent");
      await question.getByRole("button", { name: "Remove and delete", exact: true }).click();
      await page.locator('tr[data-agent-slug="sleeper"]').waitFor({ state: "detached" });
      page.off("dialog", onDialog);
      expect(nativeDialogs).toEqual([]);
      const agents = await agentsOf();
      expect(agents.map((agent) => agent.slug).sort()).toEqual(["boss", "researcher"]);
      expect(agents.find((agent) => agent.slug === "boss")?.config_json.context.subagents).toEqual([
        "researcher",
      ]);
    });
  }, 60_000);

  it("used every scripted model call", () => {
    main.assertComplete();
    researcher.assertComplete();
    slow.assertComplete();
  });
});
