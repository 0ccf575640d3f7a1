import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { FileToolLimits } from "../limits.js";
import { resolveHostPath } from "../policy.js";
import { writeAtomically } from "../safe-fs.js";
import type { FileScope } from "../scope.js";
import { formatBytes } from "../text.js";

/** What a write did, for the tool's reply and the `file_write` artifact. */
export interface WriteOutcome {
  virtual: string;
  created: boolean;
  bytes: number;
}

/** Writes bytes to a path the policy accepts for writing, atomically. */
export async function writeBytes(
  scope: FileScope,
  path: string,
  data: string | Uint8Array,
  maxBytes: number,
): Promise<WriteOutcome> {
  const bytes = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
  if (bytes > maxBytes) {
    throw new SubagentGraphError(
      ErrorCode.TooLarge,
      `content for ${JSON.stringify(path)} is ${formatBytes(bytes)}, over the ${formatBytes(maxBytes)} limit: split it into several files`,
      { field: "content" },
    );
  }
  const resolved = await resolveHostPath(scope, path, "write");
  const { created } = await writeAtomically(scope, resolved, data);
  return { virtual: resolved.virtual, created, bytes };
}

/** `write_file`: creates or replaces a text file. */
export async function writeTextFile(
  scope: FileScope,
  args: { path: string; content: string },
  limits: FileToolLimits,
): Promise<WriteOutcome> {
  return writeBytes(scope, args.path, args.content, limits.maxWriteBytes);
}
