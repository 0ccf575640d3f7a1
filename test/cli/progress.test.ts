import { describe, expect, it } from "vitest";
import { ProgressRenderer } from "../../cli/progress.js";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import type { RunEvent } from "../../runs/events.js";

const THREAD = "t1";
const RESEARCHER = "t1_sub_researcher_aaaa1111";
const REVIEWER = "t1_sub_reviewer_bbbb2222";

/** A renderer writing into a string, with a clock the test moves by hand. */
function harness(options: { live?: boolean; columns?: number; resuming?: string[] } = {}) {
  let output = "";
  let now = 1_000_000;
  const renderer = new ProgressRenderer({
    write: (text) => {
      output += text;
    },
    now: () => now,
    ...options,
  });
  return {
    renderer,
    feed: (...events: RunEvent[]) => {
      for (const event of events) renderer.handle(event);
    },
    advance: (ms: number) => {
      now += ms;
    },
    output: () => output,
    /** The output as a terminal would show it: each erase-line drops the line's text so far. */
    screen: () =>
      output
        .split("\n")
        .map((line) => line.split("\r\x1b[2K").at(-1) ?? "")
        .join("\n"),
  };
}

function mainToken(text: string): RunEvent {
  return { type: "token", threadId: THREAD, childThreadId: undefined, text };
}

function childToken(childThreadId: string, text: string): RunEvent {
  return { type: "token", threadId: THREAD, childThreadId, text };
}

function started(slug: string, childThreadId: string, id = `call-${slug}`): RunEvent {
  return {
    type: "subagent_started",
    threadId: THREAD,
    id,
    subagent_type: slug,
    child_thread_id: childThreadId,
    description: `work for ${slug}`,
    started_at: "2025-01-01T00:00:00.000Z",
    namespace: [`tools:task-${slug}`],
  };
}

function finished(slug: string, childThreadId: string, overrides: Partial<SubagentRun> = {}) {
  const run: SubagentRun = {
    id: `call-${slug}`,
    subagent_type: slug,
    child_thread_id: childThreadId,
    description: `work for ${slug}`,
    status: "completed",
    rounds: 1,
    max_rounds_reached: false,
    started_at: "2025-01-01T00:00:00.000Z",
    finished_at: "2025-01-01T00:00:02.500Z",
    result_preview: `findings of ${slug}`,
    error: null,
    artifacts: [],
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    ...overrides,
  };
  return { type: "subagent_finished", threadId: THREAD, run } satisfies RunEvent;
}

function mainMessage(text: string): RunEvent {
  return {
    type: "assistant_message",
    threadId: THREAD,
    childThreadId: undefined,
    text,
    toolCalls: [],
  };
}

describe("ProgressRenderer", () => {
  it("streams the main agent's tokens and only counts the subagents' tokens", () => {
    const { feed, output } = harness();
    feed(
      mainToken("Delegating "),
      mainToken("now."),
      started("researcher", RESEARCHER),
      childToken(RESEARCHER, "SECRET-CHILD-TEXT "),
      childToken(RESEARCHER, "more "),
      childToken(RESEARCHER, "words"),
      finished("researcher", RESEARCHER),
    );
    expect(output()).toContain("Delegating now.");
    expect(output()).not.toContain("SECRET-CHILD-TEXT");
    expect(output()).toContain("3 tokens");
  });

  it("writes a line when a subagent starts and one when it finishes, with its facts", () => {
    const { feed, output } = harness();
    feed(
      started("researcher", RESEARCHER),
      started("reviewer", REVIEWER),
      finished("researcher", RESEARCHER, {
        rounds: 2,
        result_preview: "Solar is cheap.\nWind too.",
      }),
      finished("reviewer", REVIEWER),
    );
    expect(output().split("\n")).toEqual([
      `▸ researcher started (thread ${RESEARCHER})`,
      `▸ reviewer started (thread ${REVIEWER})`,
      "✓ researcher completed (2.5s, 2 rounds): Solar is cheap. Wind too.",
      "✓ reviewer completed (2.5s, 1 round): findings of reviewer",
      "",
    ]);
  });

  it.each([
    ["failed", "failed", "model exploded"],
    ["timeout", "timed out", "timed out after 1000 ms"],
    ["cancelled", "cancelled", "cancelled with the parent run"],
  ] as const)("marks a %s subagent with ✗ and its error", (status, word, error) => {
    const { feed, output } = harness();
    feed(
      started("reviewer", REVIEWER),
      finished("reviewer", REVIEWER, { status, rounds: 0, result_preview: "", error }),
    );
    const last = output().trimEnd().split("\n").at(-1);
    expect(last).toBe(`✗ reviewer ${word} (2.5s, 0 rounds): ${error}`);
    expect(output()).not.toContain("✓");
  });

  it("starts subagent lines on a new line after the main agent's unfinished text", () => {
    const { feed, output } = harness();
    feed(mainToken("Delegating to both."), started("researcher", RESEARCHER));
    expect(output()).toBe(`Delegating to both.\n▸ researcher started (thread ${RESEARCHER})\n`);
  });

  it("shows a complete main message that was not streamed, and does not repeat a streamed one", () => {
    const { feed, output } = harness();
    feed(mainToken("Hello"), mainToken(" there"), mainMessage("Hello there"));
    feed(mainMessage("Unstreamed answer"));
    expect(output()).toBe("Hello there\nUnstreamed answer\n");
  });

  it("reports a main tool error that started no subagent", () => {
    const { feed, output } = harness();
    feed({
      type: "tool_result",
      threadId: THREAD,
      childThreadId: undefined,
      toolCallId: "call-x",
      name: "task",
      text: 'unknown subagent "writer"',
      isError: true,
    });
    expect(output()).toBe('✗ task error: unknown subagent "writer"\n');
  });

  it("shows a task call that ended before its child ran as one ✗ line, nothing running", () => {
    const { feed, output, renderer } = harness({ live: true });
    const error = 'unknown subagent_type "writer": use one of "researcher"';
    feed(
      started("writer", ""),
      finished("writer", "", {
        status: "failed",
        rounds: 0,
        result_preview: "",
        error,
        finished_at: "2025-01-01T00:00:00.000Z",
      }),
      {
        type: "tool_result",
        threadId: THREAD,
        childThreadId: undefined,
        toolCallId: "call-writer",
        name: "task",
        text: error,
        isError: true,
      },
    );
    expect(output()).toBe(`✗ writer failed (0.0s, 0 rounds): ${error}\n`);
    expect(renderer.runningCount).toBe(0);
  });

  it("in live mode, ticks redraw a status line with elapsed seconds and erase it at the end", () => {
    const { feed, advance, renderer, screen } = harness({ live: true });
    feed(started("researcher", RESEARCHER), started("reviewer", REVIEWER));
    advance(3_200);
    feed(childToken(REVIEWER, "a"), childToken(REVIEWER, "b"));
    renderer.tick();
    expect(screen().split("\n").at(-1)).toBe("… running: researcher 3s · reviewer 3s, 2 tokens");
    feed(finished("researcher", RESEARCHER), finished("reviewer", REVIEWER));
    renderer.tick();
    renderer.end();
    const lines = screen().split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.filter((line) => line.startsWith("… running"))).toEqual([]);
    expect(lines.filter((line) => line.startsWith("✓"))).toHaveLength(2);
  });

  it("cuts the live status line to the terminal width", () => {
    const { feed, renderer, screen } = harness({ live: true, columns: 20 });
    feed(started("researcher", RESEARCHER));
    renderer.tick();
    expect(screen().split("\n").at(-1)).toBe("… running: research");
  });

  it("without live mode, a tick writes nothing", () => {
    const { feed, advance, renderer, output } = harness();
    feed(started("researcher", RESEARCHER));
    const before = output();
    advance(5_000);
    renderer.tick();
    expect(output()).toBe(before);
    expect(output()).not.toContain("\x1b");
  });

  it("writes the final output when the main agent streamed nothing", () => {
    const { feed, output } = harness();
    feed({
      type: "run_finished",
      result: {
        threadId: THREAD,
        runId: "r1",
        output: "The answer.",
        messages: [],
        interrupts: [],
        subagentRuns: [],
        subagentUsage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
      },
    });
    expect(output()).toBe("The answer.\n");
  });

  it("shows a subagent paused on a gated call as waiting for approval, also on the status line", () => {
    const { feed, renderer, advance, screen } = harness({ live: true });
    feed(started("researcher", RESEARCHER), started("reviewer", REVIEWER));
    feed({
      type: "subagent_waiting",
      threadId: THREAD,
      id: "call-researcher",
      subagent_type: "researcher",
      child_thread_id: RESEARCHER,
      description: "work for researcher",
      started_at: "2025-01-01T00:00:00.000Z",
      namespace: ["tools:task-researcher"],
      approval: {
        id: "i1",
        value: {
          actionRequests: [{ name: "write_file", args: { path: "a" } }],
          reviewConfigs: [{ actionName: "write_file", allowedDecisions: ["approve"] }],
        },
      },
    });
    advance(3000);
    renderer.tick();
    expect(screen().split("\n")).toEqual([
      `▸ researcher started (thread ${RESEARCHER})`,
      `▸ reviewer started (thread ${REVIEWER})`,
      `⏸ researcher waiting for approval (thread ${RESEARCHER})`,
      "… running: researcher waiting for approval · reviewer 3s",
    ]);
  });

  it("shows the start of a child that a resume takes up again as resumed", () => {
    const { feed, output } = harness({ resuming: [RESEARCHER] });
    feed(started("researcher", RESEARCHER), started("reviewer", REVIEWER));
    expect(output().split("\n")).toEqual([
      `▸ researcher resumed (thread ${RESEARCHER})`,
      `▸ reviewer started (thread ${REVIEWER})`,
      "",
    ]);
  });
});
