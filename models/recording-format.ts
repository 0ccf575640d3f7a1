import type { StoredMessage } from "@langchain/core/messages";
import type { ActionRequest, Decision, ReviewConfig } from "langchain";
import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { RecordedRequest } from "./model-request.js";

/**
 * The version of {@link ThreadRecording}'s format. 3 added the approvals a call waited for
 * (`RecordedCall.approval`); 2 added each call's request (what the graph sent the model);
 * version 1 holds the responses only ({@link ThreadRecordingV1}). Older versions stay readable.
 */
export const RECORDING_VERSION = 3;

/**
 * A thread's model calls, recorded as they were made (`recordThread`): the main agent's, in
 * order, and each subagent run's (keyed by subagent and task description, since several
 * children of one turn run concurrently). Each call holds what the graph sent the model and
 * what the model answered. JSON, so it can be kept as a test fixture.
 */
export interface ThreadRecording {
  version: typeof RECORDING_VERSION;
  /** The main agent's slug. */
  agent: string;
  /** The user's messages, one per turn, in order: what a replay test sends again. */
  inputs: string[];
  /** The main agent's model calls, in order. */
  calls: RecordedCall[];
  /** One entry per subagent run, in the order the parent recorded them. */
  children: RecordedChild[];
}

/** One model call: what the graph sent, the model's response, and the approval it waited for. */
export interface RecordedCall {
  request: RecordedRequest;
  /**
   * The response as LangChain stores messages (`mapChatMessagesToStoredMessages`): as the model
   * gave it, before a person's decision edited or dropped any of its tool calls.
   */
  response: StoredMessage;
  /**
   * When tool calls of the response were gated (`context.interrupt_on`): the request the run
   * paused with, and the value it was resumed with. A replay pauses here too, checks the request
   * and resumes with the same value.
   */
  approval?: RecordedApproval;
}

/**
 * One pause for approval: what the agent asked (langchain's `HITLRequest`, plus the subagent for
 * a child's request) and what the person answered (`command.resume` for that request).
 *
 * @example
 * {
 *   "request": {
 *     "actionRequests": [{ "name": "write_file", "args": { "file_path": "/notes.md", "content": "…" }, "description": "…" }],
 *     "reviewConfigs": [{ "actionName": "write_file", "allowedDecisions": ["approve", "reject"] }],
 *     "subagent": { "subagent_type": "researcher", "description": "Find …" }
 *   },
 *   "resume": { "decisions": [{ "type": "approve" }] }
 * }
 */
export interface RecordedApproval {
  request: RecordedApprovalRequest;
  resume: { decisions: Decision[] };
}

/**
 * A request for approval as the thread's interrupt carried it, without what changes on every
 * run (the child thread and tool call ids, times).
 */
export interface RecordedApprovalRequest {
  /** The gated calls, in order: each tool's name, arguments and description. */
  actionRequests: ActionRequest[];
  /** What may be decided of each call, in the same order. */
  reviewConfigs: ReviewConfig[];
  /** For a subagent's call: which subagent, on which task. */
  subagent?: { subagent_type: string; description: string };
}

/**
 * The format of version 2: the calls without approvals (a thread that never paused). Read as
 * version 3 unchanged.
 */
export interface ThreadRecordingV2 {
  version: 2;
  agent: string;
  inputs: string[];
  calls: { request: RecordedRequest; response: StoredMessage }[];
  children: {
    subagent_type: string;
    description: string;
    calls: { request: RecordedRequest; response: StoredMessage }[];
  }[];
}

/** A recording of any version this subagent-graph reads, as parsed from its JSON file. */
export type AnyThreadRecording = ThreadRecording | ThreadRecordingV2 | ThreadRecordingV1;

/** The model calls of one subagent run. */
export interface RecordedChild {
  subagent_type: string;
  /** The task description the child started from (its first human message). */
  description: string;
  calls: RecordedCall[];
}

/**
 * The format of version 1: the responses without what each call was sent. A replay cannot
 * check such a recording; `rerecordThread` turns it into the current format.
 */
export interface ThreadRecordingV1 {
  version: 1;
  agent: string;
  inputs: string[];
  responses: StoredMessage[];
  children: { subagent_type: string; description: string; responses: StoredMessage[] }[];
}

/** A recorded call as a replay serves it: the request is unknown in a version 1 recording. */
export interface ReplayableCall {
  request: RecordedRequest | undefined;
  response: StoredMessage;
  approval?: RecordedApproval;
}

/** A recording of any version, read into one shape. */
export interface ReadRecording {
  version: 1 | 2 | typeof RECORDING_VERSION;
  agent: string;
  inputs: string[];
  calls: ReplayableCall[];
  children: { subagent_type: string; description: string; calls: ReplayableCall[] }[];
}

// LangChain's stored form; its content may be a string or a list of parts, whatever the type
// says, so only the envelope is checked here and mapStoredMessagesToChatMessages reads the rest.
const storedMessage = z.custom<StoredMessage>(
  (value) =>
    typeof (value as { type?: unknown } | null)?.type === "string" &&
    typeof (value as { data?: unknown }).data === "object" &&
    (value as { data?: unknown }).data !== null,
  { message: "expected a stored message { type, data }" },
);

const recordedRequest: z.ZodType<RecordedRequest> = z.object({
  system_prompt: z.string(),
  subagents: z.array(z.object({ slug: z.string(), description: z.string() })),
  tools: z.array(z.object({ name: z.string(), schema: z.string() })),
  messages: z.array(
    z.object({
      role: z.string(),
      text: z.string(),
      tool_calls: z.array(z.object({ name: z.string(), args: z.unknown() })).optional(),
      name: z.string().optional(),
      error: z.literal(true).optional(),
    }),
  ),
});

const decisionType = z.enum(["approve", "edit", "reject"]);

const decision: z.ZodType<Decision> = z.union([
  z.object({ type: z.literal("approve") }),
  z.object({
    type: z.literal("edit"),
    editedAction: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }),
  }),
  z.object({ type: z.literal("reject"), message: z.string().optional() }),
]);

const recordedApproval: z.ZodType<RecordedApproval> = z.object({
  request: z.object({
    actionRequests: z.array(
      z.object({
        name: z.string(),
        args: z.record(z.string(), z.unknown()),
        description: z.string().optional(),
      }),
    ),
    reviewConfigs: z.array(
      z.object({
        actionName: z.string(),
        allowedDecisions: z.array(decisionType),
        argsSchema: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
    subagent: z.object({ subagent_type: z.string(), description: z.string() }).optional(),
  }),
  resume: z.object({ decisions: z.array(decision) }),
});

const recordedCall: z.ZodType<RecordedCall> = z.object({
  request: recordedRequest,
  response: storedMessage,
  approval: recordedApproval.optional(),
});

/** Versions 2 and 3 share a shape: a version 2 call has no `approval`. */
const recordingOf = <V extends number>(version: V) =>
  z.object({
    version: z.literal(version),
    agent: z.string(),
    inputs: z.array(z.string()),
    calls: z.array(recordedCall),
    children: z.array(
      z.object({
        subagent_type: z.string(),
        description: z.string(),
        calls: z.array(recordedCall),
      }),
    ),
  });

const recordingV3 = recordingOf(RECORDING_VERSION);
const recordingV2 = recordingOf(2);

const recordingV1: z.ZodType<ThreadRecordingV1> = z.object({
  version: z.literal(1),
  agent: z.string(),
  inputs: z.array(z.string()),
  responses: z.array(storedMessage),
  children: z.array(
    z.object({
      subagent_type: z.string(),
      description: z.string(),
      responses: z.array(storedMessage),
    }),
  ),
});

/**
 * Reads a recording of any version (as parsed from its JSON file) into one shape.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the version or the malformed field.
 */
export function readRecording(value: unknown): ReadRecording {
  // Version 1 is mapped; versions 2 and 3 are read as they are (2 has no approvals).
  const version = (value as { version?: unknown } | null)?.version;
  if (version === 1) {
    const v1 = parse(recordingV1, value);
    const calls = (responses: StoredMessage[]) =>
      responses.map((response) => ({ request: undefined, response }));
    return {
      version: 1,
      agent: v1.agent,
      inputs: v1.inputs,
      calls: calls(v1.responses),
      children: v1.children.map((child) => ({
        subagent_type: child.subagent_type,
        description: child.description,
        calls: calls(child.responses),
      })),
    };
  }
  if (version === 2) return parse(recordingV2, value) as ReadRecording;
  if (version !== RECORDING_VERSION) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `recording version ${JSON.stringify(version)} is not one this subagent-graph reads (1 to ${RECORDING_VERSION}): record the thread again with recordThread`,
      { field: "version" },
    );
  }
  return parse(recordingV3, value) as ReadRecording;
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const field = issue?.path.map(String).join(".") ?? "";
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `the recording is malformed at ${field || "its top level"}: ${issue?.message ?? "invalid"}; record the thread again with recordThread rather than editing the file by hand`,
    { field: field || "recording" },
  );
}
