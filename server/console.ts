import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** Where the built console keeps its hashed assets (Vite's default `assets/`). */
const ASSETS_PREFIX = "/assets/";

/** An asset's path below the prefix: one file name, not starting with a dot. */
const FLAT_ASSET_NAME = /^\/[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * What the console's page may load and where it may connect: only this server. No inline
 * script or style exists in the build, so none is allowed; a token kept by the page is then out
 * of reach of injected markup.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The console's own paths: served without a token (the page asks for one and sends it itself). */
export function isConsolePath(path: string): boolean {
  return path === "/" || path === "/index.html" || path.startsWith(ASSETS_PREFIX);
}

/** True when `dir` holds a built console (`index.html`). */
export function hasBuiltConsole(dir: string): boolean {
  return existsSync(join(dir, "index.html"));
}

/**
 * Serves the built web console from `dir` at `/` (hash routes, so no fallback route is needed
 * and no API path is shadowed). The page is read on every request and assets are looked up
 * when asked, so a console rebuilt under a running server is served at the next load; a missing
 * asset gets the API's 404. Hashed assets are cached for good, the page is revalidated.
 */
export async function registerConsole(app: FastifyInstance, dir: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: join(dir, "assets"),
    prefix: ASSETS_PREFIX,
    decorateReply: false,
    dotfiles: "ignore",
    index: false,
    // Vite's assets folder is flat: anything else (folders, dot files, `..` in any spelling)
    // is answered like any unknown path.
    allowedPath: (path) => FLAT_ASSET_NAME.test(path),
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply) => {
      reply.header("cache-control", "public, max-age=31536000, immutable");
      reply.header("x-content-type-options", "nosniff");
    },
  });
  const page = async () => readFile(join(dir, "index.html"));
  for (const path of ["/", "/index.html"]) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header("content-type", "text/html; charset=utf-8")
        .header("cache-control", "no-cache")
        .header("content-security-policy", CONTENT_SECURITY_POLICY)
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .send(await page()),
    );
  }
}
