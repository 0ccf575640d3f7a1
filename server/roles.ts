/**
 * What a server process does in a fleet on PostgreSQL (`createServer`'s `role`, `serve --role`):
 * `"api"` answers requests and queues runs, `"worker"` claims and runs queued runs, `"all"` both.
 */
export type ServerRole = "all" | "api" | "worker";

/** Every {@link ServerRole}, the default first. */
export const SERVER_ROLES: readonly ServerRole[] = ["all", "api", "worker"];
