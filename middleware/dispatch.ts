import type { BaseMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { type Command, isGraphBubbleUp } from "@langchain/langgraph";
import { makeChildThreadId } from "../checkpoints/child-thread-id.js";
import { messageOf, SubagentGraphError } from "../errors.js";
import { messageText } from "../util/message-text.js";
import { messagesOf } from "../util/state-messages.js";
import {
  admitChild,
  type CallerPolicy,
  callingTurn,
  refuseCall,
  type TaskCall,
} from "./admission.js";
import { CallEvents } from "./call-events.js";
import { ChildClock } from "./child-clock.js";
import { ambientCallbacks, childStreamNamespace } from "./child-namespace.js";
import { type ChildGraph, childRunConfig, linkedAbortSignal, NEW_INPUT_KEY } from "./child-run.js";
import { type ParentRunScope, parentScope } from "./parent-scope.js";
import { runChild } from "./run-child.js";
import { finishedRun, type RunIdentity } from "./run-records.js";
import type { SubagentRun } from "./subagent-runs.js";
import type { DispatchLimits, LoadedChild, TaskArgs, TaskMiddlewareOptions } from "./task-types.js";
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
    return events.end(reason);
  }
}

/** Admits the call (`admission.ts`), loading its subagent in between, then runs it. */
async function dispatch(
  args: TaskArgs,
  runtime: ToolRuntime,
  options: TaskMiddlewareOptions,
  identity: RunIdentity,
  events: CallEvents,
): Promise<Command> {
  const slug = args.subagent_type;
  const runSignal = runtime.signal ?? new AbortController().signal;

  let scope: ParentRunScope;
  try {
    scope = parentScope(runtime.context, runtime.configurable);
  } catch (error) {
    // The graph was invoked without the context the runtime always sets (e.g. by hand), or
    // with a malformed one: the message names the field and the fix.
    if (!SubagentGraphError.isInstance(error)) throw error;
    return events.end(error.message);
  }
  const turn = callingTurn(runtime.state, identity.id);
  const call: TaskCall = { slug, tools: args.tools, turnTaskCalls: turn.taskCalls };
  let limits: DispatchLimits;
  let policy: CallerPolicy;
  let child: LoadedChild | undefined;
  try {
    limits = await options.limits(scope);
    policy = {
      allowedSlugs: options.subagents.map((subagent) => subagent.slug),
      maxParallelSubagents: limits.maxParallelSubagents,
    };
    const refusal = refuseCall(call, policy);
    if (refusal !== undefined) return events.end(refusal);
    // Loading reads the record, connects its MCP servers and builds its graph (model, tools):
    // any of them may fail, and each failure is this call's, recorded below.
    child = await options.loadChild(slug, scope);
  } catch (error) {
    return runSignal.aborted
      ? events.end(`subagent ${JSON.stringify(slug)} cancelled with the parent run`, "cancelled")
      : events.end(couldNotStart(slug, error));
  }
  const admission = admitChild(call, policy, child);
  if (!admission.admitted) return events.end(admission.reason);

  identity.child_thread_id = makeChildThreadId({
    parentThreadId: scope.threadId,
    slug,
    toolCallId: identity.id,
    aiMessageId: turn.message?.id ?? identity.id,
  });
  return runAdmitted(
    { args, runtime, identity, events, scope, limits, child: admission.child, runSignal },
    admission.allowedTools,
  );
}

/** An admitted call, with what running its child needs. */
interface AdmittedCall {
  args: TaskArgs;
  runtime: ToolRuntime;
  identity: RunIdentity;
  events: CallEvents;
  scope: ParentRunScope;
  limits: DispatchLimits;
  child: LoadedChild;
  /** The parent run's signal. */
  runSignal: AbortSignal;
}

/** Runs an admitted call's child on its own thread, to a record and the tool result. */
async function runAdmitted(call: AdmittedCall, allowedTools: readonly string[]): Promise<Command> {
  const { args, runtime, identity, events, scope, limits, child, runSignal } = call;
  const slug = args.subagent_type;
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
      allowed_tools: [...allowedTools],
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

/** The text of the child's last assistant message ("" when it ended on tool calls only). */
function finalAnswer(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType() === "ai") return messageText(message);
  }
  return "";
}
