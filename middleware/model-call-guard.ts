import { Runnable, RunnableBinding } from "@langchain/core/runnables";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { createMiddleware, type ModelRequest } from "langchain";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";

/** Options of {@link createModelCallGuardMiddleware}. */
export interface ModelCallGuardOptions {
  /**
   * How long one model call may take, its retries included, in ms; read on every call, so a
   * changed setting applies to the next call without a restart.
   */
  timeoutMs(): number;
}

/**
 * Bounds every model call of an agent and gives its failures a code:
 *
 * - **Timeout**: the call gets an abort signal of its own that fires after `timeoutMs`, joined
 *   to the run's signal by LangChain's config merge. It aborts the HTTP request itself (also a
 *   stream that stalls half-way) and every retry the client would still make, and the call fails
 *   with `MODEL_TIMEOUT`. The signal is handed to the model through a config binding
 *   (`withConfig`) rather than `ChatOpenAI`'s `timeout` option, which bounds each attempt
 *   separately (retried after a time-out, so a hung server holds a call for `(retries + 1) ×
 *   timeout`) and which other chat models do not have.
 * - **Failure**: anything else the model call throws (an HTTP error after the client's retries,
 *   a broken connection) becomes `MODEL_FAILED`, naming the model and what it answered.
 *
 * A call cut short by the run's own signal (a cancel) is rethrown as it is: the run's lifecycle
 * classifies that by the signal. Errors that are ours already (a scripted model's
 * `SCRIPT_VIOLATION`) keep their code. Either way the failing step is the model's, so nothing of
 * it reaches the thread: its last checkpoint is the one before the call, whose tool calls are all
 * answered, and the thread takes the next message.
 *
 * Mounted innermost, so it wraps the model call alone and not the other middleware's work.
 */
export function createModelCallGuardMiddleware(options: ModelCallGuardOptions) {
  return createMiddleware({
    name: "ModelCallGuard",
    wrapModelCall: async (request, handler) => {
      const timeoutMs = options.timeoutMs();
      const timeout = AbortSignal.timeout(timeoutMs);
      const model = withSignal(request.model, timeout);
      try {
        return await handler({ ...request, model });
      } catch (error) {
        if (request.runtime.signal?.aborted || isGraphBubbleUp(error)) throw error;
        const name = modelName(request.model);
        if (timeout.aborted) {
          throw new SubagentGraphError(
            ErrorCode.ModelTimeout,
            `model ${name} did not answer within ${timeoutMs} ms, so the call was aborted: try again, or raise the model timeout (SUBAGENT_GRAPH_MODEL_TIMEOUT_MS, or createRuntime's limits.model_timeout_ms)`,
            { cause: error },
          );
        }
        if (SubagentGraphError.isInstance(error)) throw error;
        throw new SubagentGraphError(
          ErrorCode.ModelFailed,
          `model ${name} failed: ${describeFailure(error)}; try again later, or check the model server and its key`,
          { cause: error },
        );
      }
    },
  });
}

/**
 * `model` bound to `signal` on top of the call's own. A binding of our own, not
 * `model.withConfig`: `ChatOpenAI.withConfig` keeps the signal as a default call option, which
 * the call's own signal replaces. createAgent binds the tools through such a binding (keeping its
 * config), and LangChain merges the two signals with `AbortSignal.any`, so either aborts the
 * request. A model that is already a binding is left as it is (langchain could not bind tools to
 * a binding of a binding); every model of `models/factory.ts` is a plain chat model.
 */
function withSignal(model: ModelRequest["model"], signal: AbortSignal): ModelRequest["model"] {
  if (!Runnable.isRunnable(model) || RunnableBinding.isRunnableBinding(model)) return model;
  return new RunnableBinding({ bound: model, config: { signal }, kwargs: {} });
}

/** The model's name as its provider knows it (`ChatOpenAI.model`), else its LangChain type. */
function modelName(model: unknown): string {
  const fields = model as { model?: unknown; modelName?: unknown; getName?: () => string };
  const name = fields.model ?? fields.modelName;
  if (typeof name === "string" && name.length > 0) return JSON.stringify(name);
  return typeof fields.getName === "function" ? JSON.stringify(fields.getName()) : "(unnamed)";
}

/** The HTTP status (when there is one) and the message of a failed model call. */
function describeFailure(error: unknown): string {
  const status = (error as { status?: unknown } | null)?.status;
  const message = messageOf(error);
  // langchain appends a troubleshooting URL on a line of its own: the first line says it all.
  const firstLine = message.split("\n")[0]?.trim().replace(/\.$/, "") || "(no message)";
  if (typeof status === "number" && !firstLine.startsWith(String(status))) {
    return `HTTP ${status}: ${firstLine}`;
  }
  return firstLine;
}
