import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { makeDirectorySync } from "../util/make-directory.js";

/**
 * Makes sure the data folder exists and can be written, creating it (and its parents) when
 * missing, so a bad `dataDir` fails at once with one error that names the folder, what went
 * wrong and the fix, before any store is opened in it.
 *
 * Written, not merely checked for permissions: root passes every permission check, yet cannot
 * write to a read-only mount or into `/proc`; a probe file, made and removed, tells for sure.
 *
 * @throws SubagentGraphError `DATA_DIR_UNUSABLE` naming `dataDir` and the failure.
 * @example
 * prepareDataDir("./data");
 */
export function prepareDataDir(dataDir: string): void {
  try {
    makeDirectorySync(dataDir);
  } catch (error) {
    throw unusable(dataDir, "cannot be created", error);
  }
  const probe = join(dataDir, `.write-check-${randomUUID()}`);
  try {
    writeFileSync(probe, "", { flag: "wx" });
  } catch (error) {
    throw unusable(dataDir, "cannot be written", error);
  }
  rmSync(probe, { force: true });
}

function unusable(dataDir: string, what: string, cause: unknown): SubagentGraphError {
  const reason = messageOf(cause);
  return new SubagentGraphError(
    ErrorCode.DataDirUnusable,
    `data folder "${dataDir}" ${what} (${reason}): use a folder you can write to (the dataDir option; on the command line --data <dir> or SUBAGENT_GRAPH_DATA)`,
    { field: "dataDir", cause },
  );
}
