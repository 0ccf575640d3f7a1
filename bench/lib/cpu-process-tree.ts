/**
 * A server's process tree as Linux's `/proc` shows it, for the cpu scenario (`scenarios/cpu.ts`):
 * its CPU time (the whole tree's, and one thread's), and its resident memory sampled while a
 * load runs. A server may be several processes: `langgraphjs dev` is the CLI, the tsx CLI it
 * spawns and the node process that tsx spawns to serve, so a figure of the process started alone
 * would leave out the process doing the work.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { processTicks } from "./cpu-usage.js";

/** `/proc` counts CPU time in USER_HZ ticks, 100 a second on Linux whatever the kernel's HZ. */
const MS_PER_TICK = 10;

/** Every process's parent, from `/proc/<pid>/stat` (field 4, after the parenthesised name). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // Gone since the listing.
    }
  }
  return parentOf;
}

/** `root` and all its descendants alive now, root first, parents before their children. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) {
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i] ?? -1) ?? []));
  return tree;
}

/** The node processes of `pids` (not esbuild's service, a shell, …), by `/proc/<pid>/comm`. */
export function nodeProcesses(pids: readonly number[]): number[] {
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "node";
    } catch {
      return false;
    }
  });
}

/** User + system CPU of the processes `pids` (all their threads), in ms. */
export function cpuMsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (processTicks(pid) ?? 0), 0) * MS_PER_TICK;
}

/**
 * User + system CPU of the main thread of `pid` (the thread whose id is the pid: the one running
 * the JavaScript event loop of a node process, without libuv's pool, the GC helpers or the
 * compiler threads), in ms; 0 when it is gone.
 */
export function mainThreadCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return 0;
  }
}

/** Resident memory of `pid` (`VmRSS` of `/proc/<pid>/status`), in bytes; 0 when it is gone. */
function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Resident memory of the processes `pids` together, in bytes. */
export function rssOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + rssBytes(pid), 0);
}

/** A running {@link sampleRss}. */
export interface RssSampler {
  /** Stops sampling; the highest sum seen (the last sample included), in bytes. */
  stop(): { peakBytes: number; samples: number };
}

/**
 * Samples the resident memory of `pids` together every `everyMs` (default 25 ms): a peak between
 * two samples is missed, which a load of runs lasting ≥ 100 ms each makes unlikely to matter.
 */
export function sampleRss(pids: readonly number[], everyMs = 25): RssSampler {
  let peakBytes = rssOf(pids);
  let samples = 1;
  const timer = setInterval(() => {
    peakBytes = Math.max(peakBytes, rssOf(pids));
    samples += 1;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      peakBytes = Math.max(peakBytes, rssOf(pids));
      return { peakBytes, samples: samples + 1 };
    },
  };
}

/**
 * The process listening on TCP `port` (IPv4 or IPv6, any address), from `/proc/net/tcp*` and the
 * processes' open sockets; undefined when none is. How the process that serves a server's HTTP
 * is found when the server was started through launchers (a CLI that spawns a loader that spawns
 * the server), whose pids the caller never sees.
 */
export function listenerPid(port: number): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A" && fields[9]) {
        inodes.add(`socket:[${fields[9]}]`);
      }
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) return Number(entry);
      } catch {
        // Closed since the listing.
      }
    }
  }
  return undefined;
}

/**
 * The ancestor of `pid` (itself included) whose parent is `parent`: the process `parent` started
 * that `pid` descends from; undefined when `pid` does not descend from `parent`.
 */
export function childOnPathTo(pid: number, parent: number): number | undefined {
  const parentOf = parents();
  for (let at: number | undefined = pid; at !== undefined && at > 1; at = parentOf.get(at)) {
    if (parentOf.get(at) === parent) return at;
  }
  return undefined;
}
