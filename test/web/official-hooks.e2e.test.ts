import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import { launchBrowser, openSession, waitUntil, withArtifacts } from "../support/browser.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { type HooksApp, type ProbeState, readProbe, startHooksApp } from "../support/hooks-app.js";
import {
  expectMainAnswer,
  expectMainListNeverHeldSubagentMessages,
  expectSubagentsComplete,
  ownMessages,
} from "../support/hooks-expect.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import {
  DEEP_AGENT_GRAPH,
  type OfficialDevServer,
  startOfficialDevServer,
} from "../support/official-dev-server.js";
import {
  RESEARCHER_ANSWER,
  RESEARCHER_SAVED,
  REVIEWER_ANSWER,
  twoSubagentScript,
  USER_MESSAGE,
} from "../support/two-subagent-script.js";

/**
 * LangChain's two React hooks, as a frontend developer uses them, in the project's Chromium:
 * the legacy `useStream` of `@langchain/langgraph-sdk/react` (subagents from `task` calls,
 * `filterSubagentMessages`) and the v2 `useStream` of `@langchain/react` (the thread protocol),
 * in a small Vite + React 19 page (test/fixtures/hooks-app), against our server and against the
 * official dev server on our `langgraph.json` (no context passed). A Deep Agents graph on the
 * same dev server is the reference the hooks were built for: what passes there is what a
 * frontend expects. A fake OpenAI server scripts every agent (test/support/two-subagent-script.ts):
 * the main agent calls a researcher and a reviewer in one turn, then answers.
 */

const UID = "alice";
const HOOKS = ["legacy", "v2"] as const;
type Hook = (typeof HOOKS)[number];

interface Target {
  name: string;
  api: () => string;
  assistant: string;
  token?: () => string;
}

let fake: FakeOpenAIServer;
let variant: "plain" | "approval" = "plain";
let app: HooksApp | undefined;
let browser: Browser | undefined;
let dev: OfficialDevServer | undefined;
let ours: HttpServer | undefined;

const TARGETS: Target[] = [
  {
    name: "a Deep Agents graph on the dev server (the reference)",
    api: () => dev?.server.url ?? "",
    assistant: DEEP_AGENT_GRAPH,
  },
  { name: "our graph on the dev server", api: () => dev?.server.url ?? "", assistant: "agent" },
  {
    name: "our server",
    api: () => ours?.base ?? "",
    assistant: "assistant",
    token: () => ours?.tokenOf(UID) ?? "",
  },
];

describe("LangChain's React hooks in Chromium: two subagents in one turn", {
  timeout: 120_000,
}, () => {
  beforeAll(async () => {
    fake = await startFakeOpenAIServer((request, index) =>
      twoSubagentScript(variant)(request, index),
    );
    const modelEnv = {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    };
    // The page is built while the servers start: the three take the longest.
    const [built, started, served] = await Promise.allSettled([
      startHooksApp(),
      startOfficialDevServer(modelEnv),
      startHttpServer({ users: [UID], runtime: { env: modelEnv } }),
    ]);
    if (built.status === "fulfilled") app = built.value;
    if (started.status === "fulfilled") dev = started.value;
    if (served.status === "fulfilled") ours = served.value;
    for (const outcome of [built, started, served]) {
      if (outcome.status === "rejected") throw outcome.reason;
    }
    // The demo agents, as `npm start` seeds them for its demo user: their prompts are what the
    // fake model tells them apart by.
    if (ours) await seedDemo(ours.fixture.runtime, UID);
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    await app?.close();
    await ours?.stop();
    await dev?.dispose();
    await fake?.close();
  }, 60_000);

  /** Opens the page for `hook` on `target`, sends the user's message, and returns the session. */
  async function open(hook: Hook, target: Target) {
    if (!browser || !app) throw new Error("the browser or the page did not start");
    const session = await openSession(browser, app.url);
    await session.page.goto(
      app.pageUrl({
        hook,
        api: target.api(),
        assistant: target.assistant,
        message: USER_MESSAGE,
        ...(target.token ? { token: target.token() } : {}),
      }),
    );
    return session;
  }

  /** Waits until `calls` submits/resumes have ended and the hook is idle; returns its state. */
  async function settled(page: Parameters<typeof readProbe>[0], calls: number) {
    let state: ProbeState | undefined;
    await waitUntil(
      `the hook to end call #${calls}, go idle and show the turn's end`,
      async () => {
        state = await readProbe(page);
        // Idle alone is not the end: the v2 hook's respond() resolves once the server took the
        // answer, before the resumed run's first event. The turn is over when the hook waits
        // on a request, or when the main agent's last message calls no tool.
        const last = state.main.at(-1);
        const turnOver =
          state.interrupts.length > 0 || (last?.type === "ai" && last.toolCalls.length === 0);
        return state.calls.length >= calls && !state.isLoading && turnOver;
      },
      60_000,
    );
    return state as ProbeState;
  }

  /** The ended calls all resolved, and the hook holds no error. */
  function expectNoErrors(state: ProbeState): void {
    expect({ calls: state.calls, error: state.error }).toEqual({
      calls: state.calls.map((call) => ({ what: call.what, outcome: "resolved" })),
      error: null,
    });
  }

  for (const target of TARGETS) {
    for (const hook of HOOKS) {
      it(`${hook} useStream, ${target.name}: lists both subagents, complete, with their own messages, and keeps them out of the main list`, async () => {
        variant = "plain";
        fake.failures.length = 0;
        const session = await open(hook, target);
        try {
          await withArtifacts(session, `hooks-${hook}-${target.assistant}-plain`, async () => {
            await session.page.getByTestId("send").click();
            const state = await settled(session.page, 1);
            expectNoErrors(state);
            expectMainAnswer(state);
            expectSubagentsComplete(state, {
              researcher: RESEARCHER_ANSWER,
              reviewer: REVIEWER_ANSWER,
            });
            expectMainListNeverHeldSubagentMessages(state);
            expect(state.interrupts).toEqual([]);
            expect(fake.failures).toEqual([]);
          });
        } finally {
          await session.context.close();
        }
      });

      it(`${hook} useStream, ${target.name}: a subagent's approval shows in the hook's interrupts and respond finishes the run`, async () => {
        variant = "approval";
        fake.failures.length = 0;
        const session = await open(hook, target);
        try {
          await withArtifacts(session, `hooks-${hook}-${target.assistant}-approval`, async () => {
            await session.page.getByTestId("send").click();
            await settled(session.page, 1);
            // The request and the card's messages reach the page in separate renders.
            let paused = await readProbe(session.page);
            await waitUntil("the researcher's card to show its gated call", async () => {
              paused = await readProbe(session.page);
              return paused.subagents.some((entry) =>
                ownMessages(entry).some((m) => m.toolCalls.some((c) => c.name === "write_file")),
              );
            });
            expectNoErrors(paused);
            // One request, the researcher's write_file, shown once.
            expect(paused.interrupts).toHaveLength(1);
            expect(paused.interrupts[0]?.value).toMatchObject({
              actionRequests: [expect.objectContaining({ name: "write_file" })],
            });
            if (hook === "v2") {
              expect(paused.threadInterrupts.map((entry) => entry.id)).toEqual([
                paused.interrupts[0]?.id,
              ]);
            }
            expectMainListNeverHeldSubagentMessages(paused);
            // The paused researcher's card shows the call it waits on; the reviewer is done.
            const byName = Object.fromEntries(paused.subagents.map((entry) => [entry.name, entry]));
            expect(Object.keys(byName).sort()).toEqual(["researcher", "reviewer"]);
            expect(byName.reviewer?.status).toBe("complete");
            expect(
              byName.researcher && ownMessages(byName.researcher).flatMap((m) => m.toolCalls),
            ).toEqual([expect.objectContaining({ name: "write_file" })]);

            await session.page.getByTestId("respond").click();
            const done = await settled(session.page, 2);
            expectNoErrors(done);
            expect(done.interrupts).toEqual([]);
            expect(done.threadInterrupts).toEqual([]);
            expectMainAnswer(done);
            expectSubagentsComplete(done, { researcher: "write_file", reviewer: REVIEWER_ANSWER });
            expectMainListNeverHeldSubagentMessages(done);
            // The researcher's answer after its approved write reached the main agent.
            expect(done.main.map((message) => message.text)).toContain(RESEARCHER_SAVED);
            expect(fake.failures).toEqual([]);
          });
        } finally {
          await session.context.close();
        }
      });
    }
  }
});
