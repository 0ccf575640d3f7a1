/**
 * The statements {@link ForkSafePostgresSaver} writes with: a checkpoint with its blobs, and a
 * task's writes, each in ONE statement. The stock saver sends `BEGIN`, one `INSERT` per blob (or
 * per write), the checkpoint's `INSERT` and `COMMIT`: six or seven round trips for a typical
 * checkpoint, and most of a fleet process's CPU went to sending them (bench/README.md,
 * "Scenario: fleet").
 * One statement is one implicit transaction in PostgreSQL, so all or nothing still holds; the
 * rows, columns and conflict rules are the stock saver's (`sql.ts` of
 * `@langchain/langgraph-checkpoint-postgres`), so any reader of those tables sees no difference.
 */

/**
 * `($a, $b, …)` groups of `width` numbered parameters, the first numbered `first`; `casts`, when
 * given, types each column (a VALUES list in FROM has no target column to infer them from).
 */
function valueGroups(count: number, width: number, first: number, casts?: string[]): string {
  const groups: string[] = [];
  for (let row = 0; row < count; row += 1) {
    const start = first + row * width;
    const params = Array.from({ length: width }, (_, i) =>
      casts ? `$${start + i}::${casts[i]}` : `$${start + i}`,
    );
    groups.push(`(${params.join(", ")})`);
  }
  return groups.join(", ");
}

/** The types of a blob row's parameters: channel, version, type, bytes. */
const BLOB_CASTS = ["text", "text", "text", "bytea"];

/**
 * Inserts a checkpoint (replacing one with its id, as the stock saver does) and the blobs of its
 * new channel versions (keeping an existing blob of the same version). Parameters: `$1` thread
 * id, `$2` namespace, `$3` checkpoint id, `$4` parent id, `$5` checkpoint, `$6` metadata, then
 * per blob its channel, version, type and bytes (null for an `empty` one).
 */
export function putCheckpointSql(schema: string, blobCount: number): string {
  const blobs =
    blobCount === 0
      ? ""
      : `WITH blobs AS (
  INSERT INTO "${schema}".checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT $1, $2, b.channel, b.version, b.type, b.blob
  FROM (VALUES ${valueGroups(blobCount, 4, 7, BLOB_CASTS)}) AS b(channel, version, type, blob)
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
`;
  return `${blobs}INSERT INTO "${schema}".checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
}

/** Columns of one row of {@link putWritesSql}, in order. */
export const WRITE_COLUMNS = 9;

/**
 * Inserts `rowCount` writes of one task. `replace`: the stock rule for special writes (errors,
 * interrupts…), which replace a stored write of the same index; other writes keep the first
 * stored. Each row: thread id, namespace, checkpoint id, task id, task path, index, channel,
 * type, bytes. The rows of one statement must not share an index (see the saver's `putWrites`).
 */
export function putWritesSql(schema: string, rowCount: number, replace: boolean): string {
  return `INSERT INTO "${schema}".checkpoint_writes
  (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
VALUES ${valueGroups(rowCount, WRITE_COLUMNS, 1)}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${
    replace
      ? "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path"
      : "DO NOTHING"
  }`;
}
