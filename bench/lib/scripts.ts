import { messageText } from "../../util/message-text.js";
import type { BenchCall, BenchReply } from "./model.js";

/** Slug (ours) and name (Deep Agents) of the benchmark subagent. */
export const CHILD_NAME = "worker";
export const CHILD_DESCRIPTION = "Answers one self-contained question.";
export const CHILD_PROMPT = "You are worker.";
export const MAIN_PROMPT = "You are boss, the main agent.";

/** The user message that makes the main model fan out to `k` task calls (0 = answer at once). */
export function fanOutInput(k: number): string {
  return `fan out ${k}`;
}

/**
 * The main agent's behaviour, the same for every system: on a user message `fan out K` it makes
 * K parallel `task` calls to the worker (K = 0: it answers at once); once the tool results are
 * in, it answers.
 */
export function mainReply(call: BenchCall): BenchReply {
  const last = call.messages.at(-1);
  if (last?.getType() === "human") {
    const k = Number(/fan out (\d+)/.exec(messageText(last))?.[1] ?? "0");
    if (k === 0) return { text: "answered at once" };
    return {
      toolCalls: Array.from({ length: k }, (_, i) => ({
        name: "task",
        args: { description: `Question ${i + 1}: what is ${i} + 1?`, subagent_type: CHILD_NAME },
      })),
    };
  }
  const results = call.messages.filter((message) => message.getType() === "tool").length;
  return { text: `done (${results} results in the thread)` };
}

/** The subagent's behaviour: answer at once. */
export function childReply(call: BenchCall): BenchReply {
  const task = call.messages.find((message) => message.getType() === "human");
  return { text: `answer to: ${task ? messageText(task).slice(0, 40) : "?"}` };
}
