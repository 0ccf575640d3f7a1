import { afterEach, describe, expect, it } from "vitest";
import type { Fleet } from "../../runs/fleet.js";
import { QueueWorker } from "../../server/live-runs/queue-worker.js";
import type { RunRegistry } from "../../server/live-runs/run-registry.js";
import type { ClaimedRun } from "../../store/run-queue.js";

/** A claim statement the test answers when it likes. */
interface PendingClaim {
  max: number;
  answer(runs: number): void;
}

/**
 * A fleet whose queue records every claim and leaves it unanswered until the test answers it,
 * and a registry whose runs end when the test ends them: enough to watch the worker's passes.
 */
function fakeFleet() {
  const claims: PendingClaim[] = [];
  const running = new Set<() => void>();
  let wake: () => void = () => {};
  let next = 0;
  const claimed = (): ClaimedRun => {
    next += 1;
    return { row: { run_id: `run-${next}`, thread_id: `thread-${next}` } } as unknown as ClaimedRun;
  };
  const fleet = {
    runner: { instanceId: "worker-1" },
    leaseMs: 30_000,
    queue: {
      claimSome: (_runner: unknown, _leaseMs: number, max: number) =>
        new Promise<ClaimedRun[]>((resolve) => {
          claims.push({ max, answer: (runs) => resolve(Array.from({ length: runs }, claimed)) });
        }),
    },
    onWake: async (handler: () => void) => {
      wake = handler;
      return () => {};
    },
    wakeFor: async () => {},
    wake: async () => {},
    sweep: async () => 0,
    handBackAll: async () => {},
  } as unknown as Fleet;
  const registry = {
    execute: () =>
      new Promise((resolve) => {
        const end = () => {
          running.delete(end);
          resolve("success");
        };
        running.add(end);
      }),
  } as unknown as RunRegistry;
  return { fleet, registry, claims, running, wake: () => wake() };
}

/** Lets the worker's promise callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("QueueWorker", () => {
  let worker: QueueWorker | undefined;
  afterEach(() => worker?.stop());

  it("claims for a wake-up call at once, even while another claim waits for its answer", async () => {
    const fake = fakeFleet();
    worker = new QueueWorker(fake.fleet, fake.registry, { concurrency: 20, warn: () => {} });
    await worker.start();
    // The start's own pass: up to 8 of the 20 slots, still unanswered.
    expect(fake.claims.map((claim) => claim.max)).toEqual([8]);
    fake.wake();
    fake.wake();
    // Each wake-up call claims in a pass of its own; the slots of unanswered claims stay taken.
    expect(fake.claims.map((claim) => claim.max)).toEqual([8, 8, 4]);
    fake.wake();
    expect(fake.claims).toHaveLength(3);

    fake.claims[1]?.answer(1);
    await settle();
    expect(worker.active).toBe(1);
    // The room the answered claim left is claimed again (the wake-up call that found none).
    expect(fake.claims.map((claim) => claim.max).slice(3)).toEqual([7]);
  });

  it("never takes more runs than it has slots, and claims again as they end", async () => {
    const fake = fakeFleet();
    worker = new QueueWorker(fake.fleet, fake.registry, { concurrency: 10, warn: () => {} });
    await worker.start();
    fake.wake();
    expect(fake.claims.map((claim) => claim.max)).toEqual([8, 2]);
    for (const claim of fake.claims) claim.answer(claim.max);
    await settle();
    expect(worker.active).toBe(10);
    // Full: a wake-up call claims nothing, and a slot is not handed out.
    fake.wake();
    await settle();
    expect(worker.reserve()).toBeUndefined();
    expect(fake.claims).toHaveLength(2);

    // A full claim may have left runs behind: once slots free, the worker claims again.
    for (const end of [...fake.running].slice(0, 3)) end();
    await settle();
    expect(worker.active).toBe(7);
    expect(fake.claims.length).toBeGreaterThan(2);
    const open = fake.claims.slice(2);
    expect(open.reduce((sum, claim) => sum + claim.max, 0)).toBeLessThanOrEqual(3);
  });
});
