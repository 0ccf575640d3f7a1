import { ErrorCode, SubagentGraphError } from "../errors.js";

/**
 * What a server process does in a fleet on PostgreSQL (`createServer`'s `role`, `serve --role`):
 * `"api"` answers requests and queues runs, `"worker"` claims and runs queued runs, `"all"` both.
 */
export type ServerRole = "all" | "api" | "worker";

/** Every {@link ServerRole}, the default first. */
export const SERVER_ROLES: readonly ServerRole[] = ["all", "api", "worker"];

/**
 * `role` as a {@link ServerRole}, for a process whose database `hasFleet` (PostgreSQL).
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `role`) for an unknown role, or a split
 *   role without a fleet (SQLite)
 */
export function checkServerRole(role: string, hasFleet: boolean): ServerRole {
  if (!(SERVER_ROLES as readonly string[]).includes(role)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `role: "${role}" is not a role: use one of ${SERVER_ROLES.join(", ")}`,
      { field: "role" },
    );
  }
  if (role !== "all" && !hasFleet) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `role: "${role}" needs a fleet's shared queue, which runs on PostgreSQL: set DATABASE_URL, or use role "all" (one process on SQLite runs what it receives)`,
      { field: "role" },
    );
  }
  return role as ServerRole;
}

/** The most queued runs one process may run at once. */
const MAX_WORKERS = 1000;

/** Whether `workers` is a number of queued runs a process may run at once (1 to 1000). */
export function isWorkerCount(workers: number): boolean {
  return Number.isInteger(workers) && workers >= 1 && workers <= MAX_WORKERS;
}

/** What is wrong with a worker count `value` (`name`: the option as its user wrote it). */
export function workerCountProblem(name: string, value: string | number): string {
  return `${name}: ${value} is not a number of runs at once: use a whole number from 1 to ${MAX_WORKERS}`;
}

/** @throws SubagentGraphError `VALIDATION_FAILED` (field `workers`) unless {@link isWorkerCount} */
export function checkWorkerCount(workers: number): number {
  if (!isWorkerCount(workers)) {
    throw new SubagentGraphError(ErrorCode.Validation, workerCountProblem("workers", workers), {
      field: "workers",
    });
  }
  return workers;
}
