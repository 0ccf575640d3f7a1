/**
 * Who runs a run, told precisely enough that another process on the same machine can find out
 * whether that process still lives.
 *
 * A thread's lease (`store/runs.ts`) expires when its process stops renewing it, which takes the
 * lease's length (30 s by default). A process on the same machine need not wait: it can ask the
 * kernel whether the pid still exists. Pids only compare within one pid namespace of one boot (a
 * container has its own; two containers may even share a host name, and a restarted container's
 * server is pid 1 again), and a pid is reused once its process is gone, so the identity carries
 * the pid's scope (boot id and pid namespace on Linux) and the process's start time.
 */

import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { errnoOf } from "./errno.js";

/** A process running runs, as a run's row records it. */
export interface ProcessIdentity {
  /** A random id per runtime (a process may hold several runtimes). */
  instanceId: string;
  /** The host name, for messages. */
  host: string;
  pid: number;
  /**
   * Where `pid` names this process: on Linux the boot id and the pid namespace, elsewhere the host
   * name. A scope starting with `unknown:` matches nothing, so such a process is never judged
   * dead by its pid (only by its lease).
   */
  pidScope: string;
  /** When the process started, in the kernel's clock ticks since boot ("" when unknown). */
  pidStart: string;
}

/** Whether the process behind a {@link ProcessIdentity} still runs, as far as this one can tell. */
export type Liveness = "alive" | "dead" | "unknown";

/** This process, as runtime `instanceId` (see {@link ProcessIdentity}). */
export function currentProcess(instanceId: string): ProcessIdentity {
  return {
    instanceId,
    host: hostname(),
    pid: process.pid,
    pidScope: pidScope(instanceId),
    pidStart: startTimeOf(process.pid),
  };
}

/**
 * Whether `holder` still runs, seen from `self`: `dead` only when it is certain (same pid scope,
 * and the pid is gone or now belongs to a process started at another time); `unknown` for a
 * process elsewhere (another machine or container: only its lease can tell).
 */
export function livenessOf(
  holder: Pick<ProcessIdentity, "pid" | "pidScope" | "pidStart">,
  self: ProcessIdentity,
): Liveness {
  if (holder.pidScope !== self.pidScope || self.pidScope.startsWith("unknown:")) return "unknown";
  // This process: another runtime in it, or this one; either releases its runs itself.
  if (holder.pid === self.pid) return "alive";
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ESRCH") return "dead";
    // EPERM: the pid exists but belongs to another user; anything else tells nothing.
    if (code !== "EPERM") return "unknown";
  }
  const stat = statOf(holder.pid);
  // A zombie has exited; only its parent has not collected its exit status yet.
  if (stat?.state === "Z" || stat?.state === "X") return "dead";
  // A different start time: the pid was reused by a new process after the holder died.
  if (holder.pidStart !== "" && stat && stat.start !== holder.pidStart) return "dead";
  return "alive";
}

/**
 * The scope pids compare in. Linux: `linux:<boot id>:<pid namespace>` (after a reboot, or in
 * another container, the same pid is another process). Elsewhere there are no pid namespaces:
 * the host name.
 */
function pidScope(instanceId: string): string {
  if (process.platform !== "linux") return `${process.platform}:${hostname()}`;
  try {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const namespace = readlinkSync("/proc/self/ns/pid");
    return `linux:${bootId}:${namespace}`;
  } catch {
    // Without /proc the namespace is unknowable: never compare pids.
    return `unknown:${instanceId}`;
  }
}

/**
 * When process `pid` started, as {@link ProcessIdentity.pidStart} records it (clock ticks after
 * boot); "" where unreadable (no such process, not Linux).
 */
export function startTimeOf(pid: number): string {
  return statOf(pid)?.start ?? "";
}

/**
 * Fields 3 (state: `Z` for a zombie) and 22 (start time) of `/proc/<pid>/stat`; undefined where
 * unreadable. The command name (field 2) is in parentheses and may hold spaces, so fields are
 * counted from the last ")".
 */
function statOf(pid: number): { state: string; start: string } | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3, so field 22 is fields[19].
    return { state: fields[0] ?? "", start: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}
