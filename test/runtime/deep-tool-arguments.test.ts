import { afterEach, describe, expect, it } from "vitest";
import { ScriptedChatModel } from "../../models/scripted.js";
import { makeRuntime, type RuntimeFixture } from "../support/runtime-fixture.js";

/** `{ a: { a: … { leaf: 1 } } }`, `depth` objects deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

/**
 * A model that sends tool-call arguments nested far deeper than any tool takes: the checkpoint
 * serializer cannot read back a message nested past about 50 levels, so keeping the call as sent
 * would leave the thread unreadable. The call is refused and its arguments dropped instead.
 */
describe("tool-call arguments nested too deep", () => {
  let fixture: RuntimeFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it("are refused with a message the model can act on, and the thread stays readable and usable", async () => {
    const main = new ScriptedChatModel("main", [
      { reply: { toolCalls: [{ name: "current_time", args: nested(200) }] } },
      { reply: { text: "Sorry, here it is without the nesting." } },
      { reply: { text: "Second turn works." } },
    ]);
    fixture = await makeRuntime({ saver: "sqlite", models: { "scripted:main": main } });
    const runtime = fixture.runtime;
    await runtime.agents.create("u1", {
      slug: "main",
      name: "Main",
      is_default: true,
      config_json: { context: { model: "scripted:main", tools: ["current_time"] } },
    });

    const first = await runtime.run({ uid: "u1", input: "What time is it?" });
    expect(first.output).toBe("Sorry, here it is without the nesting.");
    // What the model read back on its second call: the refusal, naming the limit and the fix.
    const refusal = main.calls[1]?.messages.at(-1);
    expect(refusal?.getType()).toBe("tool");
    expect(String(refusal?.content)).toContain("nest deeper than 32 levels");
    expect(String(refusal?.content)).toContain("flatter arguments");

    // Every read of the thread still works, and so does the next turn.
    const history = await runtime.history("u1", first.threadId);
    expect(history.length).toBeGreaterThan(2);
    const state = await runtime.threads.state("u1", first.threadId);
    expect(state?.values).toBeDefined();
    const second = await runtime.run({ uid: "u1", threadId: first.threadId, input: "Again?" });
    expect(second.output).toBe("Second turn works.");
    main.assertComplete();
  });
});
