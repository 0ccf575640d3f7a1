import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { Browser } from "playwright-core";
import type { Runtime, RuntimeOptions } from "../../runtime.js";
import { createServer, type ServerOptions, type SubagentGraphServer } from "../../server/app.js";
import { buildConsole } from "../../server/console-build.js";
import { TOKEN_KEY } from "../../web/src/token-key.js";
import { type BrowserSession, launchBrowser } from "./browser.js";
import { makeRuntime, type RuntimeFixture } from "./runtime-fixture.js";

/** A real server serving a freshly built console, its runtime, users and a browser. */
export interface ConsoleServer {
  fixture: RuntimeFixture;
  runtime: Runtime;
  server: SubagentGraphServer;
  /** The server's own URL, e.g. `http://127.0.0.1:41234`. */
  base: string;
  browser: Browser;
  /** The API token of a user named in {@link startConsoleServer}'s `users`. */
  token(uid: string): string;
  /** Closes the browser, cancels the server's runs, stops it and removes every temp folder. */
  close(): Promise<void>;
}

/**
 * What the console e2e tests start: the console built by Vite into a temp folder (so a test run
 * never touches `web/dist`), a runtime on SQLite in a temp folder, its users with one token
 * each, the HTTP server on a free port and headless Chromium. Whatever started is stopped again
 * if a later step fails.
 */
export async function startConsoleServer(options: {
  users: readonly string[];
  models?: Record<string, BaseChatModel>;
  /** Other runtime options (knowledge file limits, ...). */
  runtime?: Partial<RuntimeOptions>;
  server?: Omit<ServerOptions, "consoleDir">;
}): Promise<ConsoleServer> {
  const consoleDir = mkdtempSync(join(tmpdir(), "subagent-graph-console-"));
  let fixture: RuntimeFixture | undefined;
  let server: SubagentGraphServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => {});
    if (server) {
      await server.runs.cancelAll();
      await server.app.close();
    }
    await fixture?.dispose();
    rmSync(consoleDir, { recursive: true, force: true });
  };
  try {
    await buildConsole(consoleDir);
    fixture = await makeRuntime({
      saver: "sqlite",
      ...(options.models ? { models: options.models } : {}),
      ...(options.runtime ? { runtime: options.runtime } : {}),
    });
    const tokens = new Map<string, string>();
    for (const uid of options.users) {
      await fixture.runtime.users.ensure(uid);
      tokens.set(uid, (await fixture.runtime.users.issueToken(uid, { label: "e2e" })).token);
    }
    server = await createServer(fixture.runtime, { ...options.server, consoleDir });
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    browser = await launchBrowser();
    const token = (uid: string) => {
      const issued = tokens.get(uid);
      if (issued === undefined) throw new Error(`no token for "${uid}": name it in users`);
      return issued;
    };
    return { fixture, runtime: fixture.runtime, server, base, browser, token, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Signs the session in as a returning user is: the token put in local storage (where the
 * sign-in page keeps it), then the page reloaded. Resolves once the app shows "Sign out".
 */
export async function signInWithToken(session: BrowserSession, token: string): Promise<void> {
  const { page } = session;
  await page.goto("/");
  await page.evaluate(
    `localStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(token)})`,
  );
  await page.reload();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
}
