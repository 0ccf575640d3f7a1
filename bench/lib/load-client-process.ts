import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadCommand, LoadReport } from "./load-client.js";

/** The client script, forked with tsx. */
const CLIENT_SCRIPT = fileURLToPath(new URL("./load-client.ts", import.meta.url));

/**
 * The load clients in a process of their own (`load-client.ts`), so that a server's CPU time
 * and memory are the service's alone: one level at a time.
 */
export class ClientProcess {
  private readonly child: ChildProcess;

  constructor() {
    this.child = fork(CLIENT_SCRIPT, [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
  }

  send(command: LoadCommand): Promise<LoadReport> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`the load client process exited (${code}) mid-level`));
      this.child.once("exit", onExit);
      this.child.once("message", (report) => {
        this.child.off("exit", onExit);
        resolve(report as LoadReport);
      });
      this.child.send(command);
    });
  }

  /** The clients' process id (for its CPU time). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}
