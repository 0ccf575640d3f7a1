import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

/** The probe app's sources (a Vite + React 19 page using LangChain's two React hooks). */
export const HOOKS_APP_DIR = fileURLToPath(new URL("../fixtures/hooks-app", import.meta.url));

/** The probe app, built and served from its own origin. */
export interface HooksApp {
  /** `http://127.0.0.1:<port>/`: a different origin from every API server, as a real app's. */
  url: string;
  /** The page for one hook against one server (`token` goes on as the SDK's `apiKey`). */
  pageUrl(options: {
    hook: "legacy" | "v2";
    api: string;
    assistant: string;
    message: string;
    token?: string;
    resume?: unknown;
  }): string;
  /** Stops serving and removes the build. */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

/**
 * Builds test/fixtures/hooks-app with Vite's JS API into a temporary folder (JSX for React's
 * automatic runtime; the config is here, not in a file, so nothing in the fixture folder is
 * compiled by the project's Node `tsconfig`) and serves it on a free port of 127.0.0.1.
 */
export async function startHooksApp(): Promise<HooksApp> {
  const outDir = await mkdtemp(join(tmpdir(), "hooks-app-"));
  try {
    const vite = await import("vite");
    await vite.build({
      root: HOOKS_APP_DIR,
      configFile: false,
      logLevel: "warn",
      base: "./",
      // A production build whatever NODE_ENV the caller runs under (vitest sets "test", which
      // would compile JSX for React's development runtime while React itself is the production one).
      mode: "production",
      oxc: { jsx: { runtime: "automatic", importSource: "react", development: false } },
      define: { "process.env.NODE_ENV": JSON.stringify("production") },
      build: {
        outDir,
        emptyOutDir: true,
        target: "es2022",
        sourcemap: false,
        // One bundle of React, LangChain core and both SDKs: big, and only a test reads it.
        chunkSizeWarningLimit: 10_000,
        rolldownOptions: {
          // The hooks' modules start with React's "use client", which means nothing in a page.
          onwarn(warning, warn) {
            if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
          },
        },
      },
    });
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  const root = resolve(outDir);
  const server = createServer((request, response) => {
    // The build's file names need no decoding: the path is taken as it came.
    const path = new URL(request.url ?? "/", "http://x").pathname;
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (file !== root && !file.startsWith(root + sep)) {
      response.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => {
        response.writeHead(200, {
          "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        });
        response.end(body);
      },
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    pageUrl({ hook, api, assistant, message, token, resume }) {
      const query = new URLSearchParams({ hook, api, assistant, message });
      if (token !== undefined) query.set("token", token);
      if (resume !== undefined) query.set("resume", JSON.stringify(resume));
      return `${url}?${query}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** A message as the probe page reports it (test/fixtures/hooks-app/src/probe.tsx). */
export interface ProbeMessage {
  id: string | null;
  type: string;
  text: string;
  toolCalls: { id: string | null; name: string; args: Record<string, unknown> }[];
  toolCallId: string | null;
}

/** What the probe page reports (the same shape as `ProbeState` in probe.tsx). */
export interface ProbeState {
  hook: string;
  threadId: string | null;
  isLoading: boolean;
  error: string | null;
  main: ProbeMessage[];
  subagents: {
    id: string;
    name: string;
    status: string;
    namespace: string[];
    messages: ProbeMessage[];
  }[];
  interrupts: { id: string | null; value: unknown }[];
  threadInterrupts: { id: string | null; value: unknown; namespace: string[] }[];
  everMain: ProbeMessage[];
  calls: { what: string; outcome: string }[];
}

/** The probe's state now (a string expression: the project's TypeScript has no DOM types). */
export async function readProbe(page: Page): Promise<ProbeState> {
  const state = await page.evaluate<ProbeState | undefined>("globalThis.__hooksProbe");
  if (!state) throw new Error(`the probe page did not start at ${page.url()}`);
  return state;
}
