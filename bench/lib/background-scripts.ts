/**
 * The scripted models of the background scenario (`scenarios/background.ts`), the same behaviour
 * for ours and Deep Agents (only the tools' argument names differ: ours `subagent_type`, Deep
 * Agents `agentName`/`taskId`):
 * - the researcher, given `busy …`, calls `lookup` again and again (a task that stays running,
 *   active every model call); given anything else it answers `RESULT-<its task>` at once;
 * - the main agent, given `start <k> <tag>`, starts `k` researcher tasks; given `research <tag>`
 *   starts one; given `check <task id>` (Deep Agents) checks it; given anything else it answers.
 *   Every call whose input holds a researcher's result (`RESULT-…`, in a notice, a tool result
 *   or the system text) is reported to `onResult`, the moment the parent has learnt it.
 */
import { messageText } from "../../util/message-text.js";
import type { BenchCall, BenchReply } from "./model.js";

/** The background subagent's slug (ours) and name (Deep Agents). */
export const RESEARCHER = "researcher";
export const RESEARCHER_PROMPT = "You are researcher.";
export const RESEARCHER_DESCRIPTION = "Researches one question in the background.";
/** What marks a researcher's final answer in whatever the parent's model is given. */
export const RESULT_MARK = "RESULT-";
/** How many `lookup` calls a busy researcher makes before it answers (more than a block needs). */
export const BUSY_STEPS = 40;

/** The researcher: busy (`lookup` after `lookup`) or an answer at once. */
export function researcherReply(call: BenchCall): BenchReply {
  const task = call.messages.find((message) => message.getType() === "human");
  const text = task ? messageText(task) : "";
  const done = call.messages.filter((message) => message.getType() === "tool").length;
  if (text.startsWith("busy") && done < BUSY_STEPS) {
    return { toolCalls: [{ name: "lookup", args: { text: `step ${done + 1}` } }] };
  }
  return { text: `${RESULT_MARK}${text.trim()}` };
}

/** The result marks (`RESULT-<tag>`) in `call`'s input, in order of appearance. */
export function resultsSeen(call: BenchCall): string[] {
  // Notices and tool results (JSON or text alike) carry the mark in their text.
  const texts = [call.system, ...call.messages.map(messageText)];
  const found: string[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(/RESULT-([\w.-]+)/g)) found.push(match[1] ?? "");
  }
  return found;
}

/** Which tool argument names a system's start/check tools take. */
export interface ToolDialect {
  /** ours: `subagent_type`; Deep Agents: `agentName`. */
  agentArg: string;
  /** ours: `task_id`; Deep Agents: `taskId`. */
  taskArg: string;
}

export const OURS_DIALECT: ToolDialect = { agentArg: "subagent_type", taskArg: "task_id" };
export const DEEP_DIALECT: ToolDialect = { agentArg: "agentName", taskArg: "taskId" };

/**
 * The main agent's behaviour in `dialect`; `onResult(tags)` is called for every call whose input
 * holds results (after the call's latency, as the answer is made).
 */
export function mainReplyFor(dialect: ToolDialect, onResult: (tags: string[]) => void) {
  return (call: BenchCall): BenchReply => {
    const seen = resultsSeen(call);
    if (seen.length > 0) onResult(seen);
    const last = call.messages.at(-1);
    if (last?.getType() === "human") {
      const text = messageText(last).trim();
      const start = /^start (\d+) (\S+)/.exec(text);
      if (start) {
        return {
          toolCalls: Array.from({ length: Number(start[1]) }, (_, i) => ({
            name: "start_async_task",
            args: { description: `busy ${start[2]}.${i + 1}`, [dialect.agentArg]: RESEARCHER },
          })),
        };
      }
      const research = /^research (\S+)/.exec(text);
      if (research) {
        return {
          toolCalls: [
            {
              name: "start_async_task",
              args: { description: research[1] ?? "", [dialect.agentArg]: RESEARCHER },
            },
          ],
        };
      }
      const check = /^check (\S+)/.exec(text);
      if (check) {
        return {
          toolCalls: [{ name: "check_async_task", args: { [dialect.taskArg]: check[1] ?? "" } }],
        };
      }
    }
    return { text: seen.length > 0 ? `learnt ${seen.join(", ")}` : "ok" };
  };
}
