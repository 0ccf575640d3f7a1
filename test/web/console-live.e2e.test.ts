import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ScriptedChatModel } from "../../models/scripted.js";
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
import { Gate } from "../support/gate.js";
import { mainAgentPayload } from "../support/runtime-fixture.js";
import { TcpProxy } from "../support/tcp-proxy.js";

/**
 * The console through a day of use, in Chromium against a real server behind a TCP proxy (which
 * the test cuts to drop the browser's connections): a reload mid-run, a running subagent's
 * thread, a dropped stream, Cancel across conversations, markdown and hostile answers, and a
 * layout that holds at 1280×800 and 390×844.
 */

const UID = "carol";
const SCOUT_TASK = "Survey the riverbank for herons";
const SCOUT_ANSWER = "Scout report: three herons near the old mill.";
const LIVE_ANSWER = "Thanks to the scout: **three herons** were seen.";
const LOST_TASK = "Count the boats in the harbour";
const LOST_ANSWER = "Scout report: twelve boats.";
const AFTER_LOST = "Back online: twelve boats in the harbour.";
const SLOW_TASK = "Wait for the tide";
const AFTER_CANCEL = "The tide can wait.";
const LONG_WORD = "x".repeat(300);
const CLOCK_QUESTION = "What time is it?";
const CLOCK_ANSWER = "It is late.";

/** An answer with everything markdown offers, plus payloads that must stay inert. */
const MARKDOWN_ANSWER = [
  "## Heron census",
  "",
  "- first item",
  "- second item",
  "",
  `A long word: ${LONG_WORD}`,
  "",
  "| # | count |",
  "|---|---|",
  ...Array.from({ length: 40 }, (_, row) => `| ${row + 1} | ${row * 3} |`),
  "",
  "```",
  `const line = "${"y".repeat(400)}";`,
  "```",
  "",
  "<script>window.__xss = 'script';</script>",
  "",
  '<img src="x" onerror="window.__xss = \'onerror\'">',
  "",
  "[a link](javascript:window.__xss='link')",
].join("\n");

const gateLive = new Gate();
const gateLost = new Gate();

const main = new ScriptedChatModel("main", [
  {
    reply: {
      toolCalls: [{ name: "task", args: { description: SCOUT_TASK, subagent_type: "scout" } }],
    },
  },
  { reply: { text: LIVE_ANSWER } },
  {
    reply: {
      toolCalls: [{ name: "task", args: { description: LOST_TASK, subagent_type: "scout" } }],
    },
  },
  { reply: { text: AFTER_LOST } },
  {
    reply: {
      toolCalls: [{ name: "task", args: { description: SLOW_TASK, subagent_type: "sloth" } }],
    },
  },
  { reply: { text: AFTER_CANCEL } },
  { reply: { text: MARKDOWN_ANSWER } },
  { reply: { toolCalls: [{ name: "current_time", args: {} }] } },
  { reply: { text: CLOCK_ANSWER } },
  { reply: { text: "Answer one." } },
  {
    // The edited message is sent from the point before the first: nothing of it is seen.
    expect: (call) => {
      expect(call.messages.map((message) => message.getType())).toEqual(["human"]);
      expect(messageText(call.messages[0] as BaseMessage)).toBe("Second try");
    },
    reply: { text: "Answer two." },
  },
  {
    expect: (call) => {
      expect(call.messages.map((message) => messageText(message as BaseMessage))).toEqual([
        "Second try",
      ]);
    },
    reply: { text: "Answer three." },
  },
]);
const scout = new ScriptedChatModel("scout", [
  { reply: { text: SCOUT_ANSWER }, hold: (_call, signal) => gateLive.pass(signal) },
  { reply: { text: LOST_ANSWER }, hold: (_call, signal) => gateLost.pass(signal) },
]);
/** Answers after ten minutes, or never: the run is cancelled first. */
const sloth = new ScriptedChatModel("sloth", [{ reply: { text: "too late" }, delayMs: 600_000 }]);

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe("web console in Chromium: live runs, layout, rendering", () => {
  let harness: ConsoleServer | undefined;
  let proxy: TcpProxy | undefined;
  let session: BrowserSession | undefined;
  let token = "";
  let directBase = "";

  const ui = () => {
    if (!session) throw new Error("the browser did not start");
    return session;
  };
  const page = (): Page => ui().page;

  beforeAll(async () => {
    harness = await startConsoleServer({
      users: [UID],
      models: { "scripted:main": main, "scripted:scout": scout, "scripted:sloth": sloth },
    });
    const { runtime } = harness;
    token = harness.token(UID);
    await runtime.agents.create(UID, {
      slug: "scout",
      name: "Field Scout",
      description: "goes and looks",
      backend_id: "SubAgentBackend",
      config_json: { context: { model: "scripted:scout", system_prompt: "You scout." } },
    });
    await runtime.agents.create(UID, {
      slug: "sloth",
      name: "Slow Sloth",
      description: "takes its time",
      backend_id: "SubAgentBackend",
      config_json: { context: { model: "scripted:sloth", system_prompt: "You are slow." } },
    });
    await runtime.agents.create(UID, {
      ...mainAgentPayload("warden", "scripted:main", ["scout", "sloth"]),
      name: "Warden",
      is_default: true,
    });
    directBase = harness.base;
    proxy = new TcpProxy("127.0.0.1", Number(new URL(directBase).port));
    await proxy.listen();
    session = await openSession(harness.browser, proxy.url);
    await session.page.setViewportSize(DESKTOP);
    // Signed in as a returning user would be: the token is in local storage.
    await signInWithToken(session, token);
  }, 180_000);

  afterAll(async () => {
    gateLive.release();
    gateLost.release();
    await session?.context.close().catch(() => {});
    await proxy?.cut();
    await harness?.close();
  }, 60_000);

  const card = (slug: string, status?: string) =>
    page().locator(
      `[data-subagent-card][data-subagent-slug="${slug}"]${status ? `[data-status="${status}"]` : ""}`,
    );
  const cancelButton = () => page().getByRole("button", { name: "Cancel", exact: true });
  const assistantMessage = (text: string) =>
    page().locator('[data-message-role="assistant"]').filter({ hasText: text });
  const messageBox = () => page().getByLabel("Message", { exact: true });
  const connectionBanner = () =>
    page().getByRole("status").filter({ hasText: "Connection lost: retrying" });

  /** Runs axe-core on the page as it is; any violation fails with the page's name. */
  const audit = async (name: string) => {
    const violations = await axeViolations(page());
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  };

  /** Loads the chat page afresh (a hash change alone would not reload it). */
  async function openChat(hash = "#/chat") {
    await page().goto(`/${hash}`);
    await page().reload();
    await messageBox().waitFor();
    await page()
      .getByLabel("Agent", { exact: true })
      .locator("option", { hasText: "Warden" })
      .waitFor({ state: "attached" });
  }

  async function newConversation() {
    await page().getByRole("button", { name: "New conversation", exact: true }).click();
    await waitUntil("an empty conversation", async () => !page().url().includes("#/chat/"));
  }

  async function send(text: string) {
    await messageBox().fill(text);
    await page().getByRole("button", { name: "Send", exact: true }).click();
  }

  /** The thread id the page shows (from its address). */
  async function shownThreadId(): Promise<string> {
    let id = "";
    await waitUntil("a thread in the address", () => {
      id = decodeURIComponent(page().url().split("#/chat/")[1] ?? "");
      return id !== "";
    });
    return id;
  }

  /** The page's width as laid out, and the viewport's. */
  async function widths(): Promise<{ scroll: number; viewport: number }> {
    return page().evaluate<{ scroll: number; viewport: number }>(
      "({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth })",
    );
  }

  async function screenshot(name: string) {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await page().screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: false });
  }

  it("reload mid-run: rejoins the stream, restores Cancel, opens the running child's thread live, shows the answer", async () => {
    await withArtifacts(ui(), "live-reload", async () => {
      await openChat();
      await send("Any herons by the river?");
      await card("scout", "running").waitFor();
      await waitUntil("the scout's model call", () => gateLive.reached);
      const threadId = await shownThreadId();

      await page().reload();
      // Rejoined: the card runs again with its start time, Cancel is back and enabled.
      await card("scout", "running").waitFor();
      await waitForText(card("scout").locator("header"), "Field Scout");
      await waitUntil("the card's elapsed time", async () => {
        const text = (await card("scout").textContent()) ?? "";
        return /Elapsed:?\s*\d/.test(text) && !text.includes("starting");
      });
      await cancelButton().waitFor();
      expect(await cancelButton().isEnabled()).toBe(true);
      expect(page().url()).toContain(encodeURIComponent(threadId));
      // The conversation is marked running in the list.
      await page().locator(`li[data-thread-id="${threadId}"][data-running="true"]`).waitFor();

      // The running child's thread opens and shows what it has so far.
      const open = card("scout").getByRole("button", { name: /^Open thread/ });
      expect(await open.isEnabled()).toBe(true);
      await open.click();
      const dialog = page().getByRole("dialog");
      await dialog.getByRole("heading", { name: "Subagent thread: Field Scout" }).waitFor();
      await dialog.locator('[data-message-role="human"]').filter({ hasText: SCOUT_TASK }).waitFor();
      expect(await dialog.getByRole("alert").count()).toBe(0);
      expect(await dialog.locator('[data-message-role="assistant"]').count()).toBe(0);
      await screenshot("chat-child-thread-running-1280");

      // It updates while open: the scout answers, and the dialog shows it without reopening.
      gateLive.release();
      await dialog
        .locator('[data-message-role="assistant"]')
        .filter({ hasText: SCOUT_ANSWER })
        .waitFor();
      await dialog.getByRole("button", { name: "Close", exact: true }).click();
      await dialog.waitFor({ state: "hidden" });

      // The answer arrives (rendered: bold is <strong>), the card completes, Cancel goes.
      await assistantMessage("Thanks to the scout")
        .locator("strong", { hasText: "three herons" })
        .waitFor();
      await card("scout", "completed").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(scout.calls).toHaveLength(1);
    });
  }, 120_000);

  it("a dropped stream marks the cards 'connection lost', retries, and catches up", async () => {
    // Whatever happens here, the next tests get their network and the run its answer back.
    onTestFinished(async () => {
      gateLost.release();
      if (proxy && !proxy.listening) await proxy.listen();
    });
    await withArtifacts(ui(), "live-lost", async () => {
      await openChat();
      await newConversation();
      await send("How many boats?");
      await card("scout", "running").waitFor();
      await waitUntil("the scout's second model call", () => gateLost.reached);

      await proxy?.cut();
      await card("scout").and(page().locator('[data-connection="lost"]')).waitFor();
      await waitForText(card("scout"), "connection lost");
      await connectionBanner().waitFor();
      await screenshot("chat-connection-lost-1280");

      // The run goes on without the browser, and finishes while it is away.
      gateLost.release();
      await waitUntil("the run to finish on the server", () => main.calls.length === 4);
      await proxy?.listen();
      await assistantMessage(AFTER_LOST).waitFor();
      await card("scout", "completed").waitFor();
      expect(await page().locator('[data-connection="lost"]').count()).toBe(0);
      expect(await connectionBanner().count()).toBe(0);
      // Caught up without repeating anything: one human message, one answer.
      expect(await page().locator('[data-message-role="human"]').count()).toBe(1);
      expect(await assistantMessage(AFTER_LOST).count()).toBe(1);

      // A message sent while the server is unreachable is not shown as sent: it goes back to
      // the message box, with the reason.
      await proxy?.cut();
      await send("Anyone there?");
      // The chat's own alert: the files panel may report its refresh failing too.
      await page()
        .locator('[role="alert"]:not(aside.files *)')
        .filter({ hasText: "cannot be reached" })
        .waitFor();
      expect(await messageBox().inputValue()).toBe("Anyone there?");
      expect(
        await page()
          .locator('[data-message-role="human"]')
          .filter({ hasText: "Anyone there?" })
          .count(),
      ).toBe(0);
      await proxy?.listen();
    });
  }, 120_000);

  it("Cancel stays with its conversation", async () => {
    await withArtifacts(ui(), "live-cancel", async () => {
      await openChat();
      await newConversation();
      await send("Tell me when the tide turns");
      await card("sloth", "running").waitFor();
      await waitUntil("the sloth's model call", () => sloth.calls.length === 1);
      const slowThread = await shownThreadId();
      // Listed and marked running while it runs (not only once it ends).
      await page().locator(`li[data-thread-id="${slowThread}"][data-running="true"]`).waitFor();

      // Another conversation: no Cancel there, and sending is possible.
      const other = page().locator("li[data-thread-id]:not([data-running])").first();
      const otherThread = await other.getAttribute("data-thread-id");
      await other.locator("a.thread-link").click();
      await waitUntil(
        "the other conversation",
        async () => (await shownThreadId()) === otherThread,
      );
      await page().locator('[data-message-role="assistant"]').first().waitFor();
      // Waited for, not read once: on a loaded machine the page may still be swapping the
      // running conversation's view out. A Cancel that stays is still a failure (a timeout).
      await waitUntil(
        "no Cancel and no sloth card in the other conversation",
        async () => (await cancelButton().count()) === 0 && (await card("sloth").count()) === 0,
      );

      // Back: Cancel is there and cancels this run only.
      await page().locator(`li[data-thread-id="${slowThread}"] a.thread-link`).click();
      await cancelButton().waitFor();
      await cancelButton().click();
      await card("sloth", "cancelled").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(sloth.calls[0]?.finishedAt).toBeUndefined();
      await send("Never mind");
      await assistantMessage(AFTER_CANCEL).waitFor();
    });
  }, 120_000);

  it("renders markdown safely and keeps the page as wide as the viewport at 1280 and 390", async () => {
    await withArtifacts(ui(), "live-markdown", async () => {
      await openChat();
      await newConversation();
      await send("Show me everything");
      const answer = assistantMessage("Heron census");
      await answer.locator("h2", { hasText: "Heron census" }).waitFor();
      // The answer streams in: wait for its end, then count.
      await answer.getByText("a link", { exact: true }).waitFor();
      expect(await answer.locator("ul > li").count()).toBe(2);
      expect(await answer.locator("table tbody tr").count()).toBe(40);
      await answer.locator("pre code").waitFor();
      await answer.getByRole("button", { name: "Copy code" }).waitFor();
      // The payloads are inert: no script element, no handler, no javascript: link.
      expect(await answer.locator("script").count()).toBe(0);
      expect(await answer.locator("[onerror]").count()).toBe(0);
      expect(await answer.locator('a[href^="javascript:"]').count()).toBe(0);
      expect(await page().evaluate<unknown>("window.__xss")).toBeUndefined();

      for (const size of [DESKTOP, PHONE]) {
        await page().setViewportSize(size);
        await answer.locator("h2").scrollIntoViewIfNeeded();
        const { scroll, viewport } = await widths();
        expect({ size: size.width, scroll }).toEqual({ size: size.width, scroll: viewport });
        // The code scrolls inside its block, which stays within the viewport.
        const code = await page().evaluate<{ inner: number; outer: number; right: number }>(
          `(() => { const pre = [...document.querySelectorAll(".markdown pre")].at(-1);
            return { inner: pre.scrollWidth, outer: pre.clientWidth, right: pre.getBoundingClientRect().right }; })()`,
        );
        expect(code.inner).toBeGreaterThan(code.outer);
        expect(code.right).toBeLessThanOrEqual(size.width);
        await screenshot(`chat-markdown-${size.width}`);
      }
      await page().setViewportSize(DESKTOP);
    });
  }, 120_000);

  it("conversations: an upload does not title one, its first message does; tool calls fold; search, rename, delete", async () => {
    await withArtifacts(ui(), "live-manage", async () => {
      await openChat();
      await newConversation();
      await page()
        .getByLabel("Upload file", { exact: true })
        .setInputFiles({
          name: "clock.txt",
          mimeType: "text/plain",
          buffer: Buffer.from("tick\n"),
        });
      const threadId = await shownThreadId();
      const entry = page().locator(`li[data-thread-id="${threadId}"]`);
      await waitUntil("the uploaded file", async () =>
        ((await page().locator(".files").textContent()) ?? "").includes("clock.txt"),
      );
      await send(CLOCK_QUESTION);
      await assistantMessage(CLOCK_ANSWER).waitFor();
      await waitForText(entry, CLOCK_QUESTION);
      const stored = await harness?.runtime.threads.get(UID, threadId);
      expect(stored?.metadata.title).toBe(CLOCK_QUESTION);

      // The tool call is folded, with its arguments and its result inside.
      const call = page().locator('details[data-tool-call="current_time"]');
      await call.waitFor();
      expect(await call.getAttribute("open")).toBeNull();
      await call.locator("summary").click();
      await call.getByText("Arguments", { exact: true }).waitFor();
      await call.getByText("Result", { exact: true }).waitFor();
      expect(await page().locator('[data-message-role="tool"]').count()).toBe(0);

      // Search by title.
      const search = page().getByLabel("Search conversations", { exact: true });
      await search.fill("boats");
      await waitUntil(
        "one match",
        async () => (await page().locator("li[data-thread-id]").count()) === 1,
      );
      await waitForText(page().locator("li[data-thread-id]"), "How many boats?");
      await search.fill("");

      // Rename.
      await entry.getByRole("button", { name: `Rename ${CLOCK_QUESTION}`, exact: true }).click();
      await entry.getByLabel("New title", { exact: true }).fill("Clock check");
      await entry.getByRole("button", { name: "Save", exact: true }).click();
      await waitForText(entry.locator("a.thread-link"), "Clock check");
      expect((await harness?.runtime.threads.get(UID, threadId))?.metadata.title).toBe(
        "Clock check",
      );

      // Delete, after one question.
      await entry.getByRole("button", { name: "Delete Clock check", exact: true }).click();
      const question = page().getByRole("dialog");
      await question.getByRole("heading", { name: "Delete this conversation?" }).waitFor();
      await question.getByRole("button", { name: "Delete", exact: true }).click();
      await entry.waitFor({ state: "detached" });
      const gone = await fetch(`${directBase}/threads/${threadId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(gone.status).toBe(404);
    });
  }, 120_000);

  it("30 conversations with long titles: the list scrolls on its own, the message box stays visible, phones get a drawer", async () => {
    await withArtifacts(ui(), "live-many", async () => {
      const longTitle = `Unbroken${"z".repeat(180)}`;
      for (let index = 0; index < 30; index += 1) {
        const response = await fetch(`${directBase}/threads`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            metadata: { title: index === 29 ? longTitle : `Conversation number ${index}` },
          }),
        });
        expect(response.status).toBe(200);
      }
      for (const size of [DESKTOP, PHONE]) {
        await page().setViewportSize(size);
        await openChat();
        await page().locator("li[data-thread-id]").nth(30).waitFor({ state: "attached" });
        const { scroll, viewport } = await widths();
        expect({ size: size.width, scroll }).toEqual({ size: size.width, scroll: viewport });
        const box = await messageBox().boundingBox();
        expect(box).not.toBeNull();
        expect((box?.y ?? 0) + (box?.height ?? 0)).toBeLessThanOrEqual(size.height);
        expect(await messageBox().isVisible()).toBe(true);
        const nav = page().getByRole("navigation", { name: "Conversations" });
        if (size === DESKTOP) {
          // The list scrolls by itself.
          const list = await page().evaluate<{ scroll: number; client: number }>(
            `(() => { const nav = document.querySelector('nav[aria-label="Conversations"]');
              return { scroll: nav.scrollHeight, client: nav.clientHeight }; })()`,
          );
          expect(list.scroll).toBeGreaterThan(list.client);
          // A long title's entry stays readable when picked: nothing scrolls sideways.
          const entry = nav.locator("a.thread-link", { hasText: "Unbroken" });
          await entry.click();
          await waitUntil("the long conversation", async () => page().url().includes("#/chat/"));
          const sideways = await page().evaluate<number>(
            `(() => { let max = 0;
              for (let e = document.querySelector('a.thread-link[title^="Unbroken"]'); e; e = e.parentElement)
                max = Math.max(max, e.scrollLeft);
              return max; })()`,
          );
          expect(sideways).toBe(0);
          await screenshot("chat-conversations-1280");
        } else {
          // Phones: the chat first, the list in a drawer.
          expect(await nav.isVisible()).toBe(false);
          const toggle = page().getByRole("button", { name: "Conversations", exact: true });
          await toggle.click();
          await nav.waitFor();
          expect(await toggle.getAttribute("aria-expanded")).toBe("true");
          await screenshot("chat-drawer-390");
          await nav.locator("a.thread-link").first().click();
          await nav.waitFor({ state: "hidden" });
          await screenshot("chat-conversations-390");
        }
      }
      await page().setViewportSize(DESKTOP);
    });
  }, 120_000);

  it("the agents page fits both sizes, with Edit and Delete on screen", async () => {
    await withArtifacts(ui(), "live-agents", async () => {
      for (const size of [DESKTOP, PHONE]) {
        await page().setViewportSize(size);
        await page().goto("/#/agents");
        await page().getByRole("heading", { name: "Agents", exact: true }).waitFor();
        await page().locator("tr[data-agent-slug]").nth(2).waitFor();
        const { scroll, viewport } = await widths();
        expect({ size: size.width, scroll }).toEqual({ size: size.width, scroll: viewport });
        for (const name of ["Warden", "Field Scout", "Slow Sloth"]) {
          for (const action of ["Edit", "Delete"]) {
            const button = page().getByRole("button", { name: `${action} ${name}`, exact: true });
            await button.scrollIntoViewIfNeeded();
            const box = await button.boundingBox();
            expect(box).not.toBeNull();
            expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(size.width);
          }
        }
        await screenshot(`agents-${size.width}`);
      }
      await page().setViewportSize(DESKTOP);
    });
  }, 60_000);

  it("axe-core finds no violations on any page at either size", async () => {
    await withArtifacts(ui(), "live-axe", async () => {
      for (const size of [DESKTOP, PHONE]) {
        await page().setViewportSize(size);
        // Sign-in (a fresh context: no token stored).
        const signIn = await harness?.browser.newContext({ baseURL: proxy?.url, viewport: size });
        const fresh = await signIn?.newPage();
        if (!fresh) throw new Error("no page");
        await fresh.goto("/");
        await fresh.getByLabel("API token", { exact: true }).waitFor();
        const signInViolations = (await axeViolations(fresh)).map((violation) => violation.id);
        expect({ page: `sign-in ${size.width}`, signInViolations }).toEqual({
          page: `sign-in ${size.width}`,
          signInViolations: [],
        });
        mkdirSync(ARTIFACTS_DIR, { recursive: true });
        await fresh.screenshot({ path: join(ARTIFACTS_DIR, `sign-in-${size.width}.png`) });
        await signIn?.close();

        await page().goto("/#/agents");
        await page().locator("tr[data-agent-slug]").first().waitFor();
        await audit(`agents ${size.width}`);
        await page().getByRole("button", { name: "Edit Warden", exact: true }).click();
        await page().getByRole("form", { name: "Agent form" }).waitFor();
        await audit(`agent form ${size.width}`);
        await screenshot(`agent-form-${size.width}`);

        // The conversation with a subagent card, its child thread dialog, and the drawer.
        await openChat();
        await page().locator("li[data-thread-id]").first().waitFor({ state: "attached" });
        const withCard = page().locator("li[data-thread-id]").filter({ hasText: "herons" });
        if (size === PHONE) {
          await page().getByRole("button", { name: "Conversations", exact: true }).click();
          await audit(`conversation drawer ${size.width}`);
        }
        await withCard.locator("a.thread-link").click();
        await card("scout", "completed").waitFor();
        await audit(`chat ${size.width}`);
        await screenshot(`chat-${size.width}`);
        await card("scout")
          .getByRole("button", { name: /^Open thread/ })
          .click();
        await page()
          .getByRole("dialog")
          .locator('[data-message-role="assistant"]')
          .first()
          .waitFor();
        await audit(`child thread ${size.width}`);
        await page()
          .getByRole("dialog")
          .getByRole("button", { name: "Close", exact: true })
          .click();
      }
      await page().setViewportSize(DESKTOP);
    });
  }, 180_000);

  it("attaches a file from the message box; a conversation whose agent was deleted says so", async () => {
    await withArtifacts(ui(), "live-attach", async () => {
      const runtime = harness?.runtime;
      if (!runtime) throw new Error("no runtime");
      const ephemeral = await runtime.agents.create(UID, {
        ...mainAgentPayload("ephemeral", "offline", undefined),
        name: "Ephemeral",
      });
      await openChat();
      await newConversation();
      await page().getByLabel("Agent", { exact: true }).selectOption({ label: "Ephemeral" });
      await page()
        .getByLabel("Attach file", { exact: true })
        .setInputFiles({
          name: "notes.md",
          mimeType: "text/markdown",
          buffer: Buffer.from("# notes\n"),
        });
      await waitForText(page().locator("[data-attached]"), "notes.md");
      const threadId = await shownThreadId();
      await send("Hello offline");
      const sent = page()
        .locator('[data-message-role="human"]')
        .filter({ hasText: "Hello offline" });
      await waitForText(sent, "/home/gem/user-data/uploads/notes.md");
      await page().locator('[data-message-role="assistant"]').first().waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(await page().locator("[data-attached]").count()).toBe(0);
      const uploads = await runtime.files.list(UID, threadId, "/home/gem/user-data/uploads");
      expect(uploads.map((file) => file.path)).toEqual(["/home/gem/user-data/uploads/notes.md"]);
      const stored = await runtime.threads.get(UID, threadId);
      expect(stored.metadata.title).toBe("Hello offline");

      // The agent goes away: the conversation says so instead of a blank switcher.
      await runtime.agents.delete(UID, ephemeral.id);
      await openChat(`#/chat/${encodeURIComponent(threadId)}`);
      await waitUntil("the switcher to name the deleted agent", async () =>
        (
          (await page().evaluate<string | null>(
            'document.querySelector("#agent")?.selectedOptions[0]?.textContent ?? null',
          )) ?? ""
        ).includes("deleted agent"),
      );
      await send("Still there?");
      await waitForText(page().getByRole("alert"), "no longer exists");
      expect(await messageBox().inputValue()).toBe("Still there?");
    });
  }, 120_000);

  it("edits and resends a message, and regenerates an answer, as forks of the thread", async () => {
    await withArtifacts(ui(), "live-fork", async () => {
      await openChat();
      await newConversation();
      await page().getByLabel("Agent", { exact: true }).selectOption({ label: "Warden" });
      await send("First try");
      await assistantMessage("Answer one.").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      const threadId = await shownThreadId();

      await page().getByRole("button", { name: "Edit message: First try", exact: true }).click();
      await page().getByLabel("Edit message", { exact: true }).fill("Second try");
      await page().getByRole("button", { name: "Send edited", exact: true }).click();
      await assistantMessage("Answer two.").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      const humans = page().locator('[data-message-role="human"]');
      expect(await humans.allTextContents()).toEqual([expect.stringContaining("Second try")]);
      expect(await assistantMessage("Answer one.").count()).toBe(0);

      await page().getByRole("button", { name: "Regenerate", exact: true }).click();
      await assistantMessage("Answer three.").waitFor();
      await cancelButton().waitFor({ state: "hidden" });
      expect(await assistantMessage("Answer two.").count()).toBe(0);
      expect(await humans.count()).toBe(1);

      // The thread's head is the last fork; the first branch stays in its history.
      const runtime = harness?.runtime;
      if (!runtime) throw new Error("the runtime did not start");
      const head = await runtime.threads.state(UID, threadId);
      const messages = (head?.values as { messages?: BaseMessage[] } | undefined)?.messages ?? [];
      expect(messages.map((message) => messageText(message))).toEqual([
        "Second try",
        "Answer three.",
      ]);
      const history = await runtime.history(UID, threadId);
      expect(
        history.some((checkpoint) =>
          checkpoint.messages.some((message) => messageText(message) === "Answer one."),
        ),
      ).toBe(true);

      // The branches view shows all three versions, the current one first.
      await page().getByRole("button", { name: "Branches", exact: true }).click();
      const dialog = page().getByRole("dialog");
      await dialog.getByRole("heading", { name: "Branches of this conversation" }).waitFor();
      await dialog.locator('li[data-branch="earlier"]').nth(1).waitFor({ state: "attached" });
      const summaries = await dialog.locator("li[data-branch] summary").allTextContents();
      expect(summaries).toEqual([
        "Current: Second try → Answer three.",
        "Earlier: Second try → Answer two.",
        "Earlier: First try → Answer one.",
      ]);
      await dialog.locator('li[data-branch="earlier"]').last().locator("summary").click();
      await dialog
        .locator('li[data-branch="earlier"]')
        .last()
        .locator('[data-message-role="assistant"]')
        .filter({ hasText: "Answer one." })
        .waitFor();
      await screenshot("chat-branches-1280");
      await audit("branches dialog 1280");
      await dialog.getByRole("button", { name: "Close", exact: true }).click();
      await dialog.waitFor({ state: "hidden" });
    });
  }, 120_000);

  it("used every scripted model call", () => {
    main.assertComplete();
    scout.assertComplete();
    sloth.assertComplete();
  });
});
