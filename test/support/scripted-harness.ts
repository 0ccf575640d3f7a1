import { ScriptedChatModel, type ScriptStep } from "../../models/scripted.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  type SaverKindUnderTest,
  subagentPayload,
} from "./runtime-fixture.js";

/**
 * Per-test state of the runtime suites: a runtime on one saver, the strict scripted models the
 * test made (all checked by {@link assertScriptsComplete}), and the usual agent set-ups.
 * Call {@link dispose} after each test.
 */
export class ScriptedHarness {
  fixture: RuntimeFixture | undefined;
  private readonly scripted: ScriptedChatModel[] = [];

  constructor(private readonly saver: SaverKindUnderTest) {}

  /** A strict scripted model, remembered for {@link assertScriptsComplete}. */
  model(name: string, steps: ScriptStep[]): ScriptedChatModel {
    const created = new ScriptedChatModel(name, steps);
    this.scripted.push(created);
    return created;
  }

  /** A fresh runtime with the models registered by spec. */
  async setup(
    models: Record<string, ScriptedChatModel>,
    extra: Parameters<typeof makeRuntime>[0] = {},
  ) {
    this.fixture = await makeRuntime({ saver: this.saver, models, ...extra });
    return this.fixture.runtime;
  }

  /** Fails when any scripted model of the test has unused steps. */
  assertScriptsComplete(): void {
    for (const created of this.scripted) created.assertComplete();
  }

  /**
   * Alice's main agent "boss" (model `scripted:main`) allowed to call one scripted subagent per
   * entry of `children` (slug → script; model `scripted:<slug>`).
   */
  async delegatingBoss(
    mainSteps: ScriptStep[],
    children: Record<string, ScriptStep[]>,
    mainExtra: Record<string, unknown> = {},
    runtimeExtra: Parameters<typeof makeRuntime>[0] = {},
  ) {
    const main = this.model("main", mainSteps);
    const childModels: Record<string, ScriptedChatModel> = {};
    for (const [slug, steps] of Object.entries(children)) {
      childModels[slug] = this.model(slug, steps);
    }
    const models = Object.fromEntries([
      ["scripted:main", main],
      ...Object.entries(childModels).map(([slug, child]) => [`scripted:${slug}`, child]),
    ]);
    const runtime = await this.setup(models, runtimeExtra);
    for (const slug of Object.keys(children)) {
      await runtime.agents.create("alice", subagentPayload(slug, `scripted:${slug}`));
    }
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", Object.keys(children), mainExtra),
    );
    return { runtime, main, children: childModels };
  }

  async dispose(): Promise<void> {
    await this.fixture?.dispose();
    this.fixture = undefined;
    this.scripted.length = 0;
  }
}
