/**
 * subagent-graph: the public library API. Everything a Node service needs is exported here by
 * name; the list is pinned by `test/index.test.ts`. Test helpers live in `./testing`.
 */

export type {
  DecisionType,
  InterruptOn,
  InterruptOnEntry,
} from "./agents/interrupt-on.js";
export { DECISION_TYPES } from "./agents/interrupt-on.js";
export type { Limits, ProcessSettings } from "./agents/limits.js";
export { BUILTIN_LIMITS, LIMIT_ENV_VARS } from "./agents/limits.js";
export type {
  AgentCreatePayload,
  AgentRecord,
  AgentUpdatePayload,
  BackendId,
  RuntimeContext,
  ShareConfig,
} from "./agents/schema.js";
export { GENERAL_PURPOSE_SLUG } from "./agents/schema.js";
export type { ChildThreadIdParts } from "./checkpoints/child-thread-id.js";
export { makeChildThreadId, parseChildThreadId } from "./checkpoints/child-thread-id.js";
export type { AsyncTaskStatus, AsyncTaskToolName } from "./contract.js";
export { ASYNC_TASK_STATUSES, ASYNC_TASK_TOOL_NAMES } from "./contract.js";
export type {
  ErrorCategory,
  ErrorCode as ErrorCodeValue,
  ErrorDetails,
  SubagentGraphErrorOptions,
} from "./errors.js";
export { ErrorCode, SubagentGraphError } from "./errors.js";
export type {
  ActionRequest,
  ApprovalRequest,
  ApprovalResponse,
  ApprovalSubagent,
  Decision,
  PendingApproval,
  ReviewConfig,
} from "./middleware/approval-request.js";
export type { AsyncTask } from "./middleware/async-task-records.js";
export type { SubagentRun, SubagentRunStatus, SubagentUsage } from "./middleware/subagent-runs.js";
export { TASK_TOOL_NAME } from "./middleware/task.js";
export type { RefusalReason, RefusedToolCall } from "./middleware/tool-call-answers.js";
export { defaultModelSpec, OFFLINE_MODEL } from "./models/factory.js";
export { OFFLINE_LABEL, OfflineChatModel } from "./models/offline.js";
// The run contexts under their public names (run-context.ts).
export type {
  MainRunContext as AgentContext,
  SubagentRunContext as SubAgentContext,
} from "./run-context.js";
export {
  mainRunContextSchema as agentContextSchema,
  subagentRunContextSchema as subAgentContextSchema,
} from "./run-context.js";
export type {
  AsyncTaskDetail,
  AsyncTasksApi,
  ParentNotifier,
} from "./runs/async-tasks/service.js";
export type { EventToolCall, RunEvent, RunResult } from "./runs/events.js";
export type { HealthApi, HealthMetrics, Readiness, ReadinessCheck } from "./runs/health.js";
export type { RunInfo } from "./runs/run-info.js";
export type { RunCounts } from "./runs/run-metrics.js";
export type {
  AgentsApi,
  ChildThreadView,
  EmbedderSettings,
  FileStatus,
  FilesApi,
  KbFileRecord,
  KbReadResult,
  KbSearchHit,
  KbSearchRequest,
  KbUpload,
  KbUploadResult,
  KnowledgeApi,
  KnowledgeBaseRecord,
  McpApi,
  RunRequest,
  Runtime,
  RuntimeOptions,
  SkillsApi,
} from "./runtime.js";
export { createRuntime } from "./runtime.js";
export type { FileWriteArtifact } from "./sandbox/artifacts.js";
export { SandboxLayout } from "./sandbox/layout.js";
export type { FileToolLimits } from "./sandbox/limits.js";
export { DEFAULT_FILE_TOOL_LIMITS } from "./sandbox/limits.js";
export { PathRefusal, PathRule } from "./sandbox/refusal.js";
export type { SkillInstallOptions, SkillSummary } from "./sandbox/skills/library.js";
export type { ThreadFileEntry } from "./sandbox/thread-files.js";
export { createFileTools, FILE_TOOL_NAMES } from "./sandbox/tools/file-tools.js";
export { VirtualRoot } from "./sandbox/virtual-paths.js";
export type {
  AddUserOptions,
  IssuedToken,
  IssueTokenOptions,
  TokenSummary,
  UserRecord,
  UserRepository,
} from "./store/users.js";
export { USER_ID_PATTERN } from "./store/users.js";
export type { ThreadCheckpoint } from "./threads/thread-state.js";
export type { McpServerConfig } from "./tools/mcp/config.js";
export type { McpServerState } from "./tools/mcp/connection.js";
export type { McpServerInfo } from "./tools/mcp/manager.js";
