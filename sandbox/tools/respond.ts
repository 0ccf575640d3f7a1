import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { messageOf, SubagentGraphError } from "../../errors.js";
import { errnoOf } from "../../util/errno.js";
import type { SandboxLayout } from "../layout.js";
import { scopeIdsOf } from "../run-scope.js";
import { FileScope } from "../scope.js";

/** What a file tool's work returns. */
export interface ToolReply {
  content: string;
  artifact?: unknown;
}

/**
 * Runs one file tool call in the caller's scope and answers with a ToolMessage, also for every
 * failure: langchain turns only argument-validation errors into tool messages, anything else a
 * tool throws would end the whole run. Error text never carries a host path. A cancelled run's
 * abort is rethrown so the run stops.
 */
export async function respond(
  toolName: string,
  runtime: ToolRuntime,
  layout: SandboxLayout,
  work: (scope: FileScope) => Promise<ToolReply>,
): Promise<ToolMessage> {
  const toolCallId = runtime.toolCall?.id ?? runtime.toolCallId ?? "";
  let scope: FileScope | undefined;
  try {
    scope = await FileScope.open(layout, scopeIdsOf(runtime.context, runtime.configurable));
    const reply = await work(scope);
    return new ToolMessage({
      content: reply.content,
      tool_call_id: toolCallId,
      name: toolName,
      status: "success",
      ...(reply.artifact === undefined ? {} : { artifact: reply.artifact }),
    });
  } catch (error) {
    if (runtime.signal?.aborted) throw error;
    // Our own messages quote only what the caller passed; anything else may hold host paths.
    const text = SubagentGraphError.isInstance(error)
      ? error.message
      : scrub(describeFailure(error), scope, layout);
    return new ToolMessage({
      content: `${toolName} failed: ${text}`,
      tool_call_id: toolCallId,
      name: toolName,
      status: "error",
    });
  }
}

const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a folder",
  ENOTDIR: "not a folder",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ENAMETOOLONG: "name too long",
  EMFILE: "too many open files, try again",
  EROFS: "read-only file system",
  EBUSY: "file busy, try again",
};

function scrub(text: string, scope: FileScope | undefined, layout: SandboxLayout): string {
  return scope ? scope.scrub(text) : text.split(layout.dataDir).join("<data>");
}

function describeFailure(error: unknown): string {
  const code = errnoOf(error);
  if (code && SYSTEM_ERRORS[code]) return `${SYSTEM_ERRORS[code]} (${code})`;
  return messageOf(error);
}
