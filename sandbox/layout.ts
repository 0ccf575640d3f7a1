import { join, resolve } from "node:path";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { isWellFormedUnicode } from "../util/well-formed.js";

/** Longest id accepted as a path component (thread ids of children reach about 240 bytes). */
const MAX_ID_BYTES = 255;

/**
 * Where each scope lives on the host, under the data dir:
 *
 * | scope | host folder |
 * |---|---|
 * | a user's workspace | `users/<uid>/workspace` |
 * | a file thread's uploads, outputs | `threads/<file_thread_id>/uploads`, `…/outputs` |
 * | an agent run's skills | `threads/<skills_thread_id>/skills` |
 * | the skill library | `skills/<name>` |
 *
 * Every id is checked before it becomes a path component.
 */
export class SandboxLayout {
  readonly dataDir: string;

  constructor(dataDir: string) {
    this.dataDir = resolve(dataDir);
  }

  workspace(uid: string): string {
    return join(this.dataDir, "users", pathComponent("uid", uid), "workspace");
  }

  threadDir(threadId: string): string {
    return join(this.dataDir, "threads", pathComponent("thread_id", threadId));
  }

  uploads(fileThreadId: string): string {
    return join(this.threadDir(fileThreadId), "uploads");
  }

  outputs(fileThreadId: string): string {
    return join(this.threadDir(fileThreadId), "outputs");
  }

  skillsScope(skillsThreadId: string): string {
    return join(this.threadDir(skillsThreadId), "skills");
  }

  skillLibrary(): string {
    return join(this.dataDir, "skills");
  }
}

/**
 * Returns `value` when it is safe as one path component: non-empty, not `.` or `..`, no `/`,
 * `\`, NUL or control characters, well-formed, at most 255 UTF-8 bytes.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field
 */
export function pathComponent(field: string, value: string): string {
  const problem =
    value === "" || value === "." || value === ".."
      ? "is empty or a dot name"
      : // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused.
        /[/\\\u0000-\u001f\u007f]/.test(value)
        ? "contains a slash, a backslash or a control character"
        : !isWellFormedUnicode(value)
          ? "is not well-formed Unicode"
          : Buffer.byteLength(value) > MAX_ID_BYTES
            ? `is longer than ${MAX_ID_BYTES} bytes`
            : undefined;
  if (problem === undefined) return value;
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `${field} ${JSON.stringify(value.slice(0, 80))} ${problem}: it names a folder, so use letters, digits, "-" or "_"`,
    { field },
  );
}
