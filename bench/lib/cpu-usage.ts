/**
 * CPU time from Linux's `/proc`: how busy the whole machine was over a measurement, and how many
 * cores each group of processes (the servers, PostgreSQL, the load clients) used. For the fleet
 * scenario, whose processes share the machine's two cores with PostgreSQL and the clients.
 */
import { readdirSync, readFileSync } from "node:fs";

/** `/proc` counts CPU time in USER_HZ ticks, 100 a second on Linux whatever the kernel's HZ. */
const TICKS_PER_SECOND = 100;

/** The pids of a group, resolved at the start and at the end of a measurement. */
export type PidSource = () => readonly (number | undefined)[];

/** What {@link CpuMeter.stop} reports. */
export interface CpuUsage {
  wallSeconds: number;
  /** Share of all cores' time spent busy (everything but idle and I/O wait), 0–1. */
  machineBusy: number;
  /** Cores in use on average over the measurement (CPU seconds ÷ wall seconds), by group. */
  cores: Record<string, number>;
}

/** A measurement in progress (see {@link startCpuMeter}). */
export interface CpuMeter {
  stop(): CpuUsage;
}

/** Starts measuring the machine and each group of `groups`. */
export function startCpuMeter(groups: Record<string, PidSource>): CpuMeter {
  const startedAt = performance.now();
  const machineBefore = machineTicks();
  const before = new Map<number, number>();
  for (const source of Object.values(groups)) {
    for (const pid of known(source())) before.set(pid, processTicks(pid) ?? 0);
  }
  return {
    stop() {
      const wallSeconds = (performance.now() - startedAt) / 1000;
      const machineAfter = machineTicks();
      const total = machineAfter.total - machineBefore.total;
      const cores: Record<string, number> = {};
      for (const [name, source] of Object.entries(groups)) {
        let ticks = 0;
        for (const pid of known(source())) {
          // A process started during the measurement counts from zero; one that exited
          // meanwhile is lost (the groups here live through a whole level).
          ticks += (processTicks(pid) ?? 0) - (before.get(pid) ?? 0);
        }
        cores[name] = ticks / TICKS_PER_SECOND / wallSeconds;
      }
      return {
        wallSeconds,
        machineBusy: total > 0 ? (machineAfter.busy - machineBefore.busy) / total : 0,
        cores,
      };
    },
  };
}

/** The pids of every process whose command name is `name` (e.g. all of PostgreSQL's). */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === name) pids.push(Number(entry));
    } catch {
      // Gone since the listing.
    }
  }
  return pids;
}

function known(pids: readonly (number | undefined)[]): number[] {
  return [...new Set(pids.filter((pid): pid is number => pid !== undefined))];
}

/** All cores' busy and total ticks since boot (`/proc/stat`'s first line). */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal (guest times are inside user already)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const waiting = (idle ?? 0) + (iowait ?? 0);
  const busy = [user, nice, system, irq, softirq, steal].reduce<number>((s, v) => s + (v ?? 0), 0);
  return { busy, total: busy + waiting };
}

/** User + system ticks of `pid`, or undefined when it is gone. */
export function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, inside parentheses): state is the
    // first, utime the 12th and stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}
