import { existsSync } from "node:fs";
import { join, sep } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** Where the built console keeps its hashed assets (Vite's default `assets/`). */
const ASSETS_PREFIX = "/assets/";

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
 * and no API path is shadowed). Only the files present at start are routed (`wildcard: false`):
 * everything else keeps the API's 404. Hashed assets are cached for good; `index.html` is
 * revalidated, so a rebuilt console is picked up on the next load.
 */
export async function registerConsole(app: FastifyInstance, dir: string): Promise<void> {
  const assetsDir = `${join(dir, "assets")}${sep}`;
  await app.register(fastifyStatic, {
    root: dir,
    prefix: "/",
    wildcard: false,
    index: "index.html",
    dotfiles: "deny",
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply, path) => {
      const hashed = path.startsWith(assetsDir);
      reply.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
}
