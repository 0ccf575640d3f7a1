import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
} from "playwright-core";

/**
 * Headless Chromium flags for this machine and CI. `--no-sandbox` because CI runs as root; the
 * background-networking ones keep Chromium from dialling Google's hosts at every start: on a
 * closed network those connections are refused, many at a time, and the browser stalls.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--headless",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Set it to a Chromium binary to test with that one instead of the npm registry's. */
export const CHROMIUM_PATH_ENV = "SUBAGENT_GRAPH_CHROMIUM";

/** Screenshots and page dumps of the browser tests (git-ignored). */
export const ARTIFACTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../artifacts");

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The browser comes from the npm registry, so `npm ci` is all the set-up: `@sparticuz/chromium`
 * (a devDependency) ships a brotli-packed headless Chromium with its libraries and fonts. It is
 * unpacked once per installed version into `node_modules/.cache/` (where a reinstall clears it)
 * and reused by every later run.
 *
 * The package unpacks into `os.tmpdir()` and reuses whatever `<tmpdir>/chromium` it finds, so it
 * runs in a child process whose `TMPDIR` is a fresh staging folder: a half-written or foreign
 * browser is never picked up, and the folder becomes the cache by one `rename`, which only one of
 * two racing test processes can win.
 */
export async function chromiumExecutable(): Promise<string> {
  const override = process.env[CHROMIUM_PATH_ENV]?.trim();
  if (override) return override;
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@sparticuz/chromium");
  const manifest = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as {
    version: string;
  };
  const cache = join(ROOT, "node_modules", ".cache", `chromium-${manifest.version}`);
  const binary = join(cache, "chromium");
  if (existsSync(binary)) return binary;

  mkdirSync(dirname(cache), { recursive: true });
  const staging = `${cache}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    const script = `import(${JSON.stringify(entry)}).then((m) => m.default.executablePath())`;
    await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, TMPDIR: staging },
    });
    if (!existsSync(join(staging, "chromium"))) {
      throw new Error(`@sparticuz/chromium ${manifest.version} left no chromium in ${staging}`);
    }
    writeFileSync(join(staging, "UNPACKED"), `${manifest.version}\n`);
    try {
      renameSync(staging, cache);
    } catch (error) {
      // Another test process unpacked it first: use theirs.
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/**
 * Launches headless Chromium through playwright-core (a fresh, empty user-data-dir: that is what
 * `launch()` does). Playwright's own browser downloads are never used: the binary is
 * {@link chromiumExecutable}'s.
 */
export async function launchBrowser(executablePath?: string): Promise<Browser> {
  const path = executablePath ?? (await chromiumExecutable());
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}: unset ${CHROMIUM_PATH_ENV} to use the one npm ci installs ` +
        "(@sparticuz/chromium), or point it at an existing binary",
    );
  }
  return chromium.launch({ executablePath: path, args: [...CHROMIUM_ARGS] });
}

/** A page of its own context, with what the page logged (console, errors, failed requests). */
export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console messages, uncaught errors and failed requests, in order. */
  log: string[];
}

/**
 * Opens a fresh context (empty storage) and page on `baseURL`, recording what the page logs, with
 * `timeoutMs` as the default for every wait and action.
 */
export async function openSession(
  browser: Browser,
  baseURL: string,
  timeoutMs = 20_000,
): Promise<BrowserSession> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  const log: string[] = [];
  page.on("console", (message) => log.push(`console.${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => log.push(`pageerror: ${error.stack ?? error.message}`));
  page.on("requestfailed", (request) =>
    log.push(`requestfailed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`),
  );
  page.on("response", (response) => {
    if (response.status() >= 400)
      log.push(`response ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return { context, page, log };
}

/** Writes `<name>.png` (full page), `<name>.html` and `<name>.log` to {@link ARTIFACTS_DIR}. */
export async function saveArtifacts(session: BrowserSession, name: string): Promise<string[]> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const base = join(ARTIFACTS_DIR, name);
  const written: string[] = [];
  try {
    await session.page.screenshot({ path: `${base}.png`, fullPage: true, timeout: 10_000 });
    written.push(`${base}.png`);
  } catch (error) {
    session.log.push(`(screenshot failed: ${String(error)})`);
  }
  try {
    writeFileSync(`${base}.html`, await session.page.content());
    written.push(`${base}.html`);
  } catch (error) {
    session.log.push(`(page.content() failed: ${String(error)})`);
  }
  writeFileSync(`${base}.log`, `url: ${session.page.url()}\n${session.log.join("\n")}\n`);
  written.push(`${base}.log`);
  return written;
}

/**
 * Runs `body`; when it throws, saves the page's artifacts under `name` and rethrows with their
 * paths in the message.
 */
export async function withArtifacts<T>(
  session: BrowserSession,
  name: string,
  body: () => Promise<T>,
): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const written = await saveArtifacts(session, `failed-${name}`);
    if (error instanceof Error) {
      error.message += `\n(page at ${session.page.url()}; artifacts: ${written.join(", ")})`;
    }
    throw error;
  }
}

/** Polls `condition` every 50 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until `locator` (the first match) is visible and its text contains `text`. */
export async function waitForText(
  locator: Locator,
  text: string,
  timeoutMs = 20_000,
): Promise<string> {
  let seen = "";
  await waitUntil(
    `${String(locator)} to contain ${JSON.stringify(text)}`,
    async () => {
      const first = locator.first();
      if (!(await first.isVisible())) return false;
      seen = (await first.textContent()) ?? "";
      return seen.includes(text);
    },
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; last text seen: ${JSON.stringify(seen)}`);
  });
  return seen;
}

/**
 * The text listed under the visible heading whose text is exactly `heading`: the siblings after
 * it up to the next heading (going up one level at a time while the heading has no following
 * sibling, e.g. a heading wrapped in a `<header>`). `undefined` when no such heading is shown.
 */
export async function textUnderHeading(page: Page, heading: string): Promise<string | undefined> {
  // A string expression: the project's TypeScript has no DOM types.
  const expression = `(() => {
    const wanted = ${JSON.stringify(heading)};
    const isHeading = (el) => /^H[1-6]$/.test(el.tagName) || el.getAttribute("role") === "heading";
    const found = [...document.querySelectorAll("h1,h2,h3,h4,h5,h6,[role=heading]")].find(
      (el) => (el.textContent || "").trim() === wanted && el.getClientRects().length > 0,
    );
    if (!found) return null;
    let anchor = found;
    while (!anchor.nextElementSibling && anchor.parentElement && anchor.parentElement !== document.body) {
      anchor = anchor.parentElement;
    }
    const parts = [];
    for (let el = anchor.nextElementSibling; el; el = el.nextElementSibling) {
      if (isHeading(el) || el.querySelector("h1,h2,h3,h4,h5,h6,[role=heading]")) break;
      parts.push(el.textContent || "");
    }
    return parts.join("\\n");
  })()`;
  const text = await page.evaluate<string | null>(expression);
  return text ?? undefined;
}
