import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { packAhead } from "./consumer-project.js";

/**
 * How many test files start before the first one that installs the packed package. The run's
 * `npm pack` (a full `tsc` and Vite build, 20-40 s here) starts with the run, so by the time
 * three workers have each got through about three files it is mostly done. Measured before this
 * order: the README's and the consumer's test files waited 30-60 s each on the pack.
 */
const FILES_BEFORE_PACKAGE_CONSUMERS = 9;

/**
 * vitest's order (slowest and failed files first, from its cache of the last run), except that
 * the files which install the packed package (`createConsumerProject`) move back a little, and
 * their pack starts at once in vitest's own process (see `packAhead` in
 * `test/support/consumer-project.ts`). A run without such files packs nothing.
 */
export default class RunSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const consumers = sorted.filter((spec) => installsThePackage(spec.moduleId));
    const [first] = consumers;
    if (first === undefined) return sorted;
    packAhead(first.project.getProvidedContext().consumerPackDir);
    const others = sorted.filter((spec) => !consumers.includes(spec));
    return [
      ...others.slice(0, FILES_BEFORE_PACKAGE_CONSUMERS),
      ...consumers,
      ...others.slice(FILES_BEFORE_PACKAGE_CONSUMERS),
    ];
  }
}

function installsThePackage(file: string): boolean {
  return readFileSync(file, "utf8").includes("createConsumerProject(");
}
