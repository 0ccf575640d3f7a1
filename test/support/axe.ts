import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/** One rule axe-core found broken, with the elements that break it. */
export interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: unknown }[];
}

/** axe-core's browser script, read once. */
let axeScript: string | undefined;

/**
 * Runs axe-core (a devDependency) on the page as it is now and returns its violations: an
 * empty list is an accessible page by axe's rules. `exclude` names elements (CSS selectors)
 * left out, e.g. a document's own text shown in the page, which is not the page's to fix.
 */
export async function axeViolations(
  page: Page,
  exclude: readonly string[] = [],
): Promise<AxeViolation[]> {
  axeScript ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeScript);
  const context = JSON.stringify({
    include: ["html"],
    exclude: exclude.map((selector) => [selector]),
  });
  return page.evaluate<AxeViolation[]>(
    `axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  );
}
