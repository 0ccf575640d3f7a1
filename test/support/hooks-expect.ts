import { expect } from "vitest";
import type { ProbeMessage, ProbeState } from "./hooks-app.js";
import { MAIN_ANSWER, RESEARCH_TASK, REVIEW_TASK, USER_MESSAGE } from "./two-subagent-script.js";

/**
 * What test/web/official-hooks.e2e.test.ts expects of a React hook's view of the two-subagent
 * turn (test/support/two-subagent-script.ts), read from the probe page (test/support/hooks-app.ts).
 */

/** A subagent's own messages: its list without the `task` result the main list holds too. */
export const ownMessages = (subagent: ProbeState["subagents"][number]): ProbeMessage[] =>
  subagent.messages.filter(
    (message) => !(message.type === "tool" && message.toolCallId === subagent.id),
  );

/** The `task` calls of the main list, by subagent type. */
export function taskCalls(state: ProbeState): Map<string, string> {
  const calls = new Map<string, string>();
  for (const message of state.main) {
    for (const call of message.toolCalls) {
      if (call.name === "task") calls.set(String(call.args.subagent_type), call.id ?? "");
    }
  }
  return calls;
}

/**
 * Every message the main list ever showed (at any render of the run) belongs to the main
 * agent: the user's message, the main agent's AI messages (its task calls, its answer as it
 * streamed in) and the `task` results; never a subagent's input, AI message or tool call, and
 * never a message a subagent lists as its own.
 */
export function expectMainListNeverHeldSubagentMessages(state: ProbeState): void {
  const taskIds = new Set(taskCalls(state).values());
  const subagentIds = new Set(
    state.subagents.flatMap((subagent) => ownMessages(subagent).map((message) => message.id)),
  );
  const foreign = state.everMain.filter((message) => {
    if (message.id !== null && subagentIds.has(message.id)) return true;
    if (message.type === "human") return message.text !== USER_MESSAGE;
    if (message.type === "tool") return !taskIds.has(message.toolCallId ?? "");
    if (message.type === "ai") {
      return (
        !MAIN_ANSWER.startsWith(message.text) ||
        message.toolCalls.some((call) => call.name !== "task")
      );
    }
    return true;
  });
  expect(foreign, "messages the main list showed that are not the main agent's").toEqual([]);
}

/** The run's subagents as the hook lists them: exactly the ones called, each complete. */
export function expectSubagentsComplete(state: ProbeState, answers: Record<string, string>): void {
  const called = taskCalls(state);
  expect([...called.keys()].sort()).toEqual(["researcher", "reviewer"]);
  const listed = state.subagents
    .map((subagent) => ({ id: subagent.id, name: subagent.name, status: subagent.status }))
    .sort((a, b) => a.name.localeCompare(b.name));
  expect(listed).toEqual([
    { id: called.get("researcher"), name: "researcher", status: "complete" },
    { id: called.get("reviewer"), name: "reviewer", status: "complete" },
  ]);
  for (const subagent of state.subagents) {
    const own = ownMessages(subagent);
    expect(own.length, `${subagent.name}'s own messages`).toBeGreaterThan(0);
    // Its own AI message is there: the answer it gave, or the tool call it paused on.
    const expected = answers[subagent.name];
    expect(
      own.some(
        (message) =>
          message.type === "ai" &&
          (message.text === expected || message.toolCalls.some((call) => call.name === expected)),
      ),
      `${subagent.name} lists its own AI message (${expected}): ${JSON.stringify(own)}`,
    ).toBe(true);
  }
}

/** The main list at the end: the user's message, the two task calls, their results, the answer. */
export function expectMainAnswer(state: ProbeState): void {
  expect(state.main.map((message) => message.type)).toEqual(["human", "ai", "tool", "tool", "ai"]);
  expect(state.main[0]?.text).toBe(USER_MESSAGE);
  expect(state.main.at(-1)?.text).toBe(MAIN_ANSWER);
  expect(state.main[1]?.toolCalls.map((call) => [call.name, call.args.description]).sort()).toEqual(
    [
      ["task", RESEARCH_TASK],
      ["task", REVIEW_TASK],
    ],
  );
}
