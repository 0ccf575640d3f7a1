import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadCommand, LoadReport } from "./load-client.js";

/** The fetch-based client script (`load-client.ts`), forked with tsx. */
const CLIENT_SCRIPT = fileURLToPath(new URL("./load-client.ts", import.meta.url));

/**
 * The load clients in a process of their own, so that a server's CPU time and memory are the
 * service's alone: one level at a time. `script` is the client module (default `load-client.ts`,
 * raw `fetch`; `cpu-client.ts` drives the official SDK): it answers each `Command` message with
 * one `Report` message and exits when its parent disconnects.
 */
export class ClientProcess<Command extends object = LoadCommand, Report = LoadReport> {
  private readonly child: ChildProcess;

  constructor(script: string = CLIENT_SCRIPT) {
    this.child = fork(script, [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
  }

  send(command: Command): Promise<Report> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`the load client process exited (${code}) mid-level`));
      this.child.once("exit", onExit);
      this.child.once("message", (report) => {
        this.child.off("exit", onExit);
        resolve(report as Report);
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
