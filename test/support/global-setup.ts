import type { TestProject } from "vitest/node";
import { startPostgresCluster } from "./postgres-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the private PostgreSQL cluster the whole test run shares. */
    postgresUrl: string;
  }
}

/**
 * Starts one private PostgreSQL 15 cluster for the whole run (tests create their own databases
 * on it) and stops it at the end, also when tests fail.
 */
export default async function setup(project: TestProject) {
  const cluster = await startPostgresCluster();
  project.provide("postgresUrl", cluster.url);
  return () => cluster.stop();
}
