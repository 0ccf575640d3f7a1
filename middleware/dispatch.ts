import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command, isGraphBubbleUp } from "@langchain/langgraph";
import { makeChildThreadId } from "../checkpoints/child-thread-id.js";
import { messageOf, SubagentGraphError } from "../errors.js";
import { messageText } from "../util/message-text.js";
import type { PendingApproval } from "./approval-request.js";
import { ChildClock } from "./child-clock.js";
import { ambientCallbacks, childStreamNamespace } from "./child-namespace.js";
import { type ChildGraph, childRunConfig, linkedAbortSignal, NEW_INPUT_KEY } from "./child-run.js";
import { type ParentRunScope, parentScope } from "./parent-scope.js";
import { messagesOf, runChild } from "./run-child.js";
import { finishedRun, type RunIdentity } from "./run-records.js";
import type { SubagentRun } from "./subagent-runs.js";
import {
  type DispatchLimits,
  type LoadedChild,
  TASK_TOOL_NAME,
  type TaskArgs,
  type TaskMiddlewareOptions,
  type TaskStreamEvent,
} from "./task-types.js";
import { truncateAnswer } from "./truncate.js";

/**
 * One `task` call, start to end. It never throws: every refusal and every failure, wherever it
 * happens (the caller's limits, loading the subagent's record, building its graph — model,
 * tools, MCP servers —, its run), becomes an error ToolMessage plus a `subagent_runs` record, and
 * the call emits exactly one `subagent_started` and one `subagent_finished` event, so sibling
 * calls and the parent run go on and every consumer of the events sees each call end.
 *
 * A call that ends before its child runs (refused, or the subagent could not start) is recorded
 * with `child_thread_id: ""`, in its events too: no child thread was made.
 */
export async function dispatchTask(
  args: TaskArgs,
  runtime: ToolRuntime,
  options: TaskMiddlewareOptions,
): Promise<Command> {
  const identity: RunIdentity = {
    id: runtime.toolCall?.id ?? runtime.toolCallId,
    subagent_type: args.subagent_type,
    child_thread_id: "",
    description: args.description,
    started_at: new Date().toISOString(),
  };
  const namespace = childStreamNamespace(runtime.configurable, identity.id);
  const events = new CallEvents(identity, namespace, runtime.writer);
  try {
    return await dispatch(args, runtime, options, identity, events);
  } catch (error) {
    // A child waiting for a person pauses this call (LangGraph's interrupt): not a failure.
    if (isGraphBubbleUp(error)) throw error;
    // Nothing above lets an error out; this is the promise kept should a bug do so.
    const reason = `subagent ${JSON.stringify(args.subagent_type)} failed: ${messageOf(error)}; ${UNFORESEEN}`;
    return events.finish(endedRun(identity, reason), reason);
  }
}

/** The two events of one call: `started` at most once, always before `finished`. */
class CallEvents {
  private started = false;

  constructor(
    private readonly identity: RunIdentity,
    /** Where the child's own events stream (`child-namespace.ts`). */
    readonly namespace: string[],
    private readonly writer: ToolRuntime["writer"],
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.write({ type: "subagent_started", ...this.identity, namespace: this.namespace });
  }

  /** Emits `finished` (and `started` first when the call ended before it) and the result. */
  finish(run: SubagentRun, content: string): Command {
    this.start();
    this.write({ type: "subagent_finished", run });
    return result(run, content);
  }

  /** The child waits for a person: this call pauses until the parent is resumed. */
  waiting(pending: PendingApproval): void {
    this.write({
      type: "subagent_waiting",
      ...this.identity,
      namespace: this.namespace,
      approval: pending,
    });
  }

  private write(event: TaskStreamEvent): void {
    this.writer?.(event);
  }
}

async function dispatch(
  args: TaskArgs,
  runtime: ToolRuntime,
  options: TaskMiddlewareOptions,
  identity: RunIdentity,
  events: CallEvents,
): Promise<Command> {
  const slug = args.subagent_type;
  const refuse = (reason: string) => events.finish(endedRun(identity, reason), reason);
  const runSignal = runtime.signal ?? new AbortController().signal;

  let scope: ParentRunScope;
  try {
    scope = parentScope(runtime.context, runtime.configurable);
  } catch (error) {
    // The graph was invoked without the context the runtime always sets (e.g. by hand), or
    // with a malformed one: the message names the field and the fix.
    if (!SubagentGraphError.isInstance(error)) throw error;
    return refuse(error.message);
  }
  const allowedSlugs = options.subagents.map((subagent) => subagent.slug);
  let limits: DispatchLimits;
  let child: LoadedChild | undefined;
  let caller: AIMessage | undefined;
  try {
    limits = await options.limits(scope);
    // createAgent sends each tool call to the tools node separately, so the batch is seen only
    // through the calling AI message: every call of an over-cap turn reaches the same verdict,
    // before any subagent model call (also when the turn is resumed).
    caller = callingMessage(runtime.state, identity.id);
    const turnTaskCalls = caller?.tool_calls?.filter((c) => c.name === TASK_TOOL_NAME).length ?? 1;
    if (turnTaskCalls > limits.maxParallelSubagents) {
      return refuse(
        `refused: this turn made ${turnTaskCalls} task calls but at most ${limits.maxParallelSubagents} may run at once (max_parallel_subagents); make at most ${limits.maxParallelSubagents} task calls per turn`,
      );
    }
    if (!allowedSlugs.includes(slug)) {
      // Lists only the caller's allowed slugs: nothing about agents it may not use.
      return refuse(
        `unknown subagent_type ${JSON.stringify(slug)}: use one of ${quoted(allowedSlugs)}`,
      );
    }
    // Loading reads the record, connects its MCP servers and builds its graph (model, tools):
    // any of them may fail, and each failure is this call's, recorded below.
    child = await options.loadChild(slug, scope);
  } catch (error) {
    const status = runSignal.aborted ? "cancelled" : "failed";
    const reason =
      status === "cancelled"
        ? `subagent ${JSON.stringify(slug)} cancelled with the parent run`
        : couldNotStart(slug, error);
    return events.finish(endedRun(identity, reason, status), reason);
  }
  if (!child) {
    // It was allowed when this run began, and has since been deleted or unshared; the other
    // allowed slugs are all the message may name.
    const others = allowedSlugs.filter((other) => other !== slug);
    return refuse(
      `subagent ${JSON.stringify(slug)} is no longer available (deleted, or no longer shared with this user, since this run began), so it did not run: ${others.length > 0 ? `use one of ${quoted(others)}, or do the work without it` : "do the work without it"}`,
    );
  }
  const toolSet = new Set(child.toolNames);
  const requestedTools = args.tools ?? [];
  const badTools = requestedTools.filter((name) => !toolSet.has(name));
  if (badTools.length > 0) {
    // The whole call is refused: a silent filter would run the child with tools it was not
    // meant to have, or without ones the caller counted on.
    return refuse(
      `refused: tools ${quoted(badTools)} are not in the allowed set of subagent "${slug}"; choose from: ${[...child.toolNames].sort().join(", ") || "(none)"}, or omit tools`,
    );
  }

  identity.child_thread_id = makeChildThreadId({
    parentThreadId: scope.threadId,
    slug,
    toolCallId: identity.id,
    aiMessageId: caller?.id ?? identity.id,
  });
  // Started by runChild once it knows how long the child ran before a pause for approval.
  const clock =
    limits.subagentTimeoutMs === undefined ? undefined : new ChildClock(limits.subagentTimeoutMs);
  const timeout = clock?.signal;
  const signal = timeout ? AbortSignal.any([runSignal, timeout]) : runSignal;
  events.start();

  // The child follows `signal` through a plain signal of its own, released once it is over:
  // handing it `signal` itself leaks memory on every call (see linkedAbortSignal).
  const childSignal = linkedAbortSignal(signal);
  const config = childRunConfig({
    childThreadId: identity.child_thread_id,
    signal: childSignal.signal,
    parentConfigurable: runtime.configurable,
    parentCallbacks: runtime.callbacks ?? ambientCallbacks(),
    namespace: events.namespace,
    context: {
      uid: scope.uid,
      thread_id: identity.child_thread_id,
      parent_thread_id: scope.threadId,
      file_thread_id: scope.fileThreadId,
      skills_thread_id: identity.child_thread_id,
      is_subagent_runtime: true,
      // An empty `tools` means the subagent's whole allowed set, as in the oh-mai-agent design.
      allowed_tools: [...(requestedTools.length > 0 ? new Set(requestedTools) : child.toolNames)],
      max_rounds: child.maxRounds,
      intent: args.description,
      knowledge_base_ids: [...(child.knowledgeBaseIds ?? [])],
    },
  });
  let run: SubagentRun;
  let content: string;
  try {
    const outcome = await runChild(
      child.graph,
      args.description,
      config,
      { maybeStarted: runtime.configurable?.[NEW_INPUT_KEY] !== true },
      {
        subagent: {
          subagent_type: slug,
          child_thread_id: identity.child_thread_id,
          tool_call_id: identity.id,
          description: args.description,
          started_at: identity.started_at,
        },
        onWaiting: (pending) => events.waiting(pending),
        startClock: (usedMs) => clock?.start(usedMs),
      },
    );
    const answer = finalAnswer(outcome.messages);
    content = truncateAnswer(answer, limits.maxResultChars, identity.child_thread_id);
    run = finishedRun(identity, {
      status: "completed",
      messages: outcome.messages,
      maxRoundsReached: outcome.maxRoundsReached,
      preview: truncateAnswer(answer, 200),
      error: null,
    });
  } catch (error) {
    // The child waits for a person (see runChild): the call pauses, nothing is recorded yet.
    if (isGraphBubbleUp(error)) throw error;
    // Classify by which signal fired, never by the error's shape: an abort may surface as
    // AbortError, TimeoutError or a plain Error("Abort").
    const status = timeout?.aborted ? "timeout" : runSignal.aborted ? "cancelled" : "failed";
    const reason =
      status === "timeout"
        ? `timed out after ${limits.subagentTimeoutMs} ms`
        : status === "cancelled"
          ? "cancelled with the parent run"
          : messageOf(error);
    content = `subagent "${slug}" ${status === "failed" ? `failed: ${reason}` : reason}`;
    run = finishedRun(identity, {
      status,
      messages: await childMessagesSoFar(child.graph, config),
      maxRoundsReached: false,
      preview: "",
      error: reason,
    });
  } finally {
    clock?.stop();
    childSignal.dispose();
  }
  return events.finish(run, content);
}

/** The record of a call that ended before its child ran: no rounds, no child thread. */
function endedRun(
  identity: RunIdentity,
  reason: string,
  status: SubagentRun["status"] = "failed",
): SubagentRun {
  return finishedRun(identity, {
    status,
    messages: [],
    maxRoundsReached: false,
    preview: "",
    error: reason,
  });
}

/**
 * Why subagent `slug` could not start, for its record and the parent model. Our errors name the
 * cause and the fix already (and the config field at fault); any other is unforeseen.
 */
function couldNotStart(slug: string, error: unknown): string {
  const head = `subagent ${JSON.stringify(slug)} could not start`;
  if (SubagentGraphError.isInstance(error)) {
    // The field at fault, unless the message names it already.
    const field =
      error.field && !error.message.includes(error.field) ? ` (its ${error.field})` : "";
    return `${head}${field}: ${error.message}`;
  }
  return `${head}: ${messageOf(error)}; ${UNFORESEEN}`;
}

/** The fix an error we did not foresee can name. */
const UNFORESEEN =
  "this was unexpected: try again, and if it fails again check the subagent's settings (model, tools, mcp_servers) and the agent store";

function quoted(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}

/** The ToolMessage (with the record as artifact) and the state update of one call. */
function result(run: SubagentRun, content: string): Command {
  return new Command({
    update: {
      messages: [
        new ToolMessage({
          content,
          tool_call_id: run.id,
          name: TASK_TOOL_NAME,
          status: run.status === "completed" ? "success" : "error",
          artifact: run,
        }),
      ],
      subagent_runs: [run],
    },
  });
}

/** What a child that failed part-way had done (rounds, usage), for its record. */
async function childMessagesSoFar(child: ChildGraph, config: ReturnType<typeof childRunConfig>) {
  try {
    // Read with the config the child ran with (inherited keys blanked), as in runChild.
    const state = await child.getState(config);
    return messagesOf(state.values);
  } catch {
    return [];
  }
}

/** The AI message in the parent's state that holds `toolCallId`. */
function callingMessage(state: unknown, toolCallId: string): AIMessage | undefined {
  for (const message of messagesOf(state)) {
    if (message.getType() !== "ai") continue;
    const calls = (message as AIMessage).tool_calls ?? [];
    if (calls.some((call) => call.id === toolCallId)) return message as AIMessage;
  }
  return undefined;
}

/** The text of the child's last assistant message ("" when it ended on tool calls only). */
function finalAnswer(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType() === "ai") return messageText(message);
  }
  return "";
}
