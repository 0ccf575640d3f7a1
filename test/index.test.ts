import { describe, expect, it } from "vitest";
import * as api from "../index.js";
import * as testing from "../testing.js";

describe("public API", () => {
  it("has exactly the expected runtime exports", () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        "ASYNC_TASK_STATUSES",
        "ASYNC_TASK_TOOL_NAMES",
        "BUILTIN_LIMITS",
        "DECISION_TYPES",
        "DEFAULT_FILE_TOOL_LIMITS",
        "FILE_TOOL_NAMES",
        "PathRefusal",
        "PathRule",
        "SandboxLayout",
        "VirtualRoot",
        "createFileTools",
        "ErrorCode",
        "GENERAL_PURPOSE_SLUG",
        "LIMIT_ENV_VARS",
        "OFFLINE_LABEL",
        "OFFLINE_MODEL",
        "OfflineChatModel",
        "SubagentGraphError",
        "TASK_TOOL_NAME",
        "agentContextSchema",
        "createRuntime",
        "defaultModelSpec",
        "makeChildThreadId",
        "parseChildThreadId",
        "subAgentContextSchema",
        "USER_ID_PATTERN",
      ].sort(),
    );
  });

  it("ships the scripted model and the replay kit under ./testing", () => {
    expect(Object.keys(testing).sort()).toEqual(
      [
        "RECORDING_VERSION",
        "ReplayModel",
        "ScriptedChatModel",
        "recordThread",
        "replayThread",
        "rerecordThread",
      ].sort(),
    );
  });
});
