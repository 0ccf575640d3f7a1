import { subagentPayload } from "../../test/support/runtime-fixture.js";
import { BenchModel } from "../lib/model.js";
import type { Scenario } from "../lib/scenario.js";
import { childReply, mainReply } from "../lib/scripts.js";
import { median } from "../lib/stats.js";
import {
  createDeepSystem,
  type DeepSubagent,
  MAIN_SLUG,
  type OurSystem,
  openOurs,
  UID,
} from "../lib/systems.js";
import { fmt, type Table } from "../lib/table.js";
import { timeMs } from "../lib/timing.js";

interface SizeResult {
  subagents: number;
  /** `runtime.graph()` right after the agent's version changed: store reads + build + compile. */
  coldMs: number;
  /** `runtime.graph()` again: store reads + a cache hit. */
  cachedMs: number;
  /** `createDeepAgent` with as many subagents (it compiles each subagent's graph up front). */
  deepMs: number;
  samples: { cold: number[]; cached: number[]; deep: number[] };
}

/**
 * The build scenario: what it costs to get an agent's compiled graph with S subagents allowed: cold
 * (the agent changed, so its cache key is new) and cached; beside `createDeepAgent` with S
 * subagents. Our subagents' own graphs are built at their first dispatch, not here.
 */
export const buildScenario: Scenario = {
  name: "build",
  title: "Graph build cost",
  async run({ quick }) {
    const sizes = [1, 10, 50];
    const repeat = quick ? { warmup: 1, iterations: 5 } : { warmup: 3, iterations: 15 };
    const results: SizeResult[] = [];
    for (const size of sizes) {
      const main = new BenchModel("main", mainReply);
      const child = new BenchModel("child", childReply);
      const ours = (await openOurs({
        saver: "memory",
        mainModel: main,
        childModel: child,
      })) as OurSystem;
      try {
        const slugs = Array.from({ length: size }, (_, i) => `helper-${i + 1}`);
        for (const slug of slugs) {
          await ours.runtime.agents.create(
            UID,
            subagentPayload(slug, "bench:child", { tools: [] }),
          );
        }
        const boss = await ours.runtime.agents.get(UID, MAIN_SLUG);
        await ours.runtime.agents.update(UID, boss.id, {
          config_json: { context: { ...boss.config_json.context, subagents: slugs } },
        });
        const samples = { cold: [] as number[], cached: [] as number[], deep: [] as number[] };
        const subagents: DeepSubagent[] = slugs.map((slug) => ({
          name: slug,
          description: `the ${slug} subagent`,
          systemPrompt: `You are ${slug}.`,
          tools: [],
          model: child,
        }));
        for (let i = 0; i < repeat.warmup + repeat.iterations; i += 1) {
          // A new version: the next graph() misses the cache (the update itself is not timed).
          await ours.runtime.agents.update(UID, boss.id, { name: `boss ${i}` });
          const cold = await timeMs(() => ours.runtime.graph(UID, MAIN_SLUG));
          const cached = await timeMs(() => ours.runtime.graph(UID, MAIN_SLUG));
          const deep = await timeMs(async () => createDeepSystem(main, ours.stockSaver, subagents));
          if (i >= repeat.warmup) {
            samples.cold.push(cold);
            samples.cached.push(cached);
            samples.deep.push(deep);
          }
        }
        results.push({
          subagents: size,
          coldMs: median(samples.cold),
          cachedMs: median(samples.cached),
          deepMs: median(samples.deep),
          samples,
        });
      } finally {
        await ours.dispose();
      }
    }
    const table: Table = {
      title: "Graph build: main agent with S subagents allowed (median ms)",
      headers: ["S", "ours cold", "ours cached", "Deep Agents createDeepAgent"],
      rows: results.map((r) => [
        String(r.subagents),
        fmt(r.coldMs),
        fmt(r.cachedMs),
        fmt(r.deepMs),
      ]),
      notes: [
        "ours = runtime.graph(uid, agent): reads the agent and its allowed subagents from the store, then builds and compiles (cold, after a version bump) or hits the graph cache (cached).",
        "each subagent's own graph is compiled at its first dispatch and cached by its version; createDeepAgent compiles every subagent up front.",
      ],
    };
    return { tables: [table], data: { repeat, results }, targets: [] };
  },
};
