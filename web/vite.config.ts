import { defineConfig } from "vite";

/**
 * The web console: Preact components in TSX, bundled into `web/dist` with no runtime CDN (the
 * page works offline). `npm run build` runs this; `npm start` does when the build is missing
 * or older than its sources.
 */
export default defineConfig({
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: true },
});
