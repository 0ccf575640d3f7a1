import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";
import { foldersOfEndedProcesses } from "./process-alive.js";

/** A private PostgreSQL cluster on 127.0.0.1 for the tests, removed by {@link stop}. */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, local only). */
  url: string;
  /** Stops the server at once (its data is not kept) and removes its folder in the background. */
  stop(): void;
}

/** Where Debian's PostgreSQL binaries are; a clear failure (not a skip) when they are missing. */
function binDir(): string {
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error(
      "PostgreSQL is not installed: the tests need its binaries (initdb, pg_ctl). Install them with `apt-get update && apt-get install -y postgresql` (Debian's postgresql-15) and run the tests again",
    );
  }
}

/**
 * Where the cluster lives: in memory (`/dev/shm`) when it has room for a whole run's databases,
 * else the temp dir. A run creates about 500 databases, 3-4 GB in 150,000 files; on disk their
 * writeback competed with the tests for the 2 cores (2.4 GB written by four PostgreSQL test files
 * alone), and the data is thrown away at the end anyway.
 */
function clusterParent(): string {
  try {
    const { bavail, bsize } = statfsSync(MEMORY_FOLDER);
    if (bavail * bsize >= MEMORY_NEEDED_BYTES) return MEMORY_FOLDER;
  } catch {
    // No /dev/shm here.
  }
  return tmpdir();
}

/** A memory file system on Linux. */
const MEMORY_FOLDER = "/dev/shm";

/** Room a run's cluster needs, with margin: see {@link clusterParent}. */
const MEMORY_NEEDED_BYTES = 8 * 1024 ** 3;

/**
 * `initdb` into a temp dir and start it on a free port (about a second). `initdb` refuses to run
 * as root, so as root the cluster belongs to the `postgres` user and its tools run through
 * `runuser`.
 */
export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binDir();
  const asRoot = userInfo().uid === 0;
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? "runuser" : join(bin, tool);
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, tool), ...args] : args;
    return execFileSync(command, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  };
  stopClustersOfEndedRuns(run);
  // The starting process's pid in the name tells a later start whether this one is orphaned.
  const dir = mkdtempSync(join(clusterParent(), `${CLUSTER_PREFIX}${process.pid}-`));
  const data = join(dir, "data");
  if (asRoot) {
    const ids = execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim();
    const gid = execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim();
    chownSync(dir, Number(ids), Number(gid));
    chmodSync(dir, 0o700);
  }
  run("initdb", ["-D", data, "--auth=trust", "-E", "UTF8", "-U", "postgres", "--no-instructions"]);
  const port = await freePort();
  run("pg_ctl", [
    "-D",
    data,
    "-o",
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c max_connections=200 -c fsync=off`,
    "-w",
    "-l",
    join(dir, "server.log"),
    "start",
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    stop() {
      try {
        // Immediate: the data is thrown away, so no shutdown checkpoint is worth writing.
        run("pg_ctl", ["-D", data, "stop", "-m", "immediate", "-w"]);
      } finally {
        removeInBackground(dir);
      }
    },
  };
}

/**
 * A cluster's folder is `<parent>/sg-pg-<pid of the process that started it>-<random>` (see
 * {@link clusterParent}).
 */
const CLUSTER_PREFIX = "sg-pg-";

/**
 * Stops and removes the clusters whose starting process is gone: a killed test run leaves its
 * server running and its folder behind, which in `/dev/shm` holds memory until a restart.
 */
function stopClustersOfEndedRuns(run: (tool: string, args: string[]) => string): void {
  for (const parent of new Set([MEMORY_FOLDER, tmpdir()])) {
    for (const dir of foldersOfEndedProcesses(parent, CLUSTER_PREFIX)) {
      if (existsSync(join(dir, "data", "postmaster.pid"))) {
        try {
          run("pg_ctl", ["-D", join(dir, "data"), "stop", "-m", "immediate", "-w"]);
        } catch {
          // Already stopped (a stale postmaster.pid): the folder goes all the same.
        }
      }
      removeInBackground(dir);
    }
  }
}

/**
 * Removes `dir` in a detached `rm -rf` that outlives this process. A run's cluster holds a few
 * hundred databases, several gigabytes in about 150,000 files; removing them in the process
 * that stops the cluster (vitest's main process, in the global teardown) blocked it for 8-17 s
 * after the last test, every run.
 */
function removeInBackground(dir: string): void {
  const remover = spawn("rm", ["-rf", dir], { detached: true, stdio: "ignore" });
  remover.on("error", () => rmSync(dir, { recursive: true, force: true }));
  remover.unref();
}

/**
 * A fresh, empty database on the cluster (`CREATE DATABASE`), so test files never share
 * tables. Returns its URL.
 */
export async function createTestDatabase(clusterUrl: string, prefix = "t"): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
