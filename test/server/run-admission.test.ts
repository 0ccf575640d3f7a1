import { describe, expect, it } from "vitest";
import { RunAdmission } from "../../server/live-runs/run-admission.js";
import { until } from "../support/until.js";

/** An admission whose loop reads as busy as `busy.value` says. */
function admission(floor: number, busy: { value: number }, ceiling = 100) {
  return new RunAdmission({
    floor,
    ceiling,
    busyAbove: 0.9,
    sampleMs: 5,
    utilization: () => busy.value,
  });
}

/** Starts `count` entries; `admitted` lists their indexes in the order they got in. */
function enterMany(gate: RunAdmission, count: number, signals: AbortSignal[] = []) {
  const admitted: number[] = [];
  const leaves: (() => void)[] = [];
  for (let index = 0; index < count; index += 1) {
    void gate.enter(signals[index]).then((leave) => {
      admitted.push(index);
      leaves[index] = leave;
    });
  }
  return { admitted, leaves };
}

describe("RunAdmission", () => {
  it("admits the floor at once and the rest in arrival order as places free, while the loop is busy", async () => {
    const busy = { value: 1 };
    const gate = admission(2, busy);
    const { admitted, leaves } = enterMany(gate, 5);
    await until(() => admitted.length === 2);
    expect(admitted).toEqual([0, 1]);
    expect(gate.counts).toEqual({ active: 2, waiting: 3 });
    leaves[1]?.();
    await until(() => admitted.length === 3);
    leaves[0]?.();
    await until(() => admitted.length === 4);
    expect(admitted).toEqual([0, 1, 2, 3]);
    // Leaving twice gives one place back, not two.
    leaves[0]?.();
    expect(gate.counts).toEqual({ active: 2, waiting: 1 });
  });

  it("admits past the floor, one sample at a time, once the loop has time to spare", async () => {
    const busy = { value: 1 };
    const gate = admission(1, busy);
    const { admitted } = enterMany(gate, 4);
    await until(() => admitted.length === 1);
    busy.value = 0.2;
    await until(() => admitted.length === 4);
    expect(admitted).toEqual([0, 1, 2, 3]);
    expect(gate.counts).toEqual({ active: 4, waiting: 0 });
  });

  it("never passes the ceiling, however idle the loop", async () => {
    const gate = admission(1, { value: 0 }, 2);
    const { admitted, leaves } = enterMany(gate, 3);
    await until(() => admitted.length === 2);
    expect(gate.counts).toEqual({ active: 2, waiting: 1 });
    leaves[0]?.();
    await until(() => admitted.length === 3);
    expect(admitted).toEqual([0, 1, 2]);
  });

  it("lets a run cancelled while it waits go on at once, ahead of the others, to stop", async () => {
    const gate = admission(1, { value: 1 });
    const cancel = new AbortController();
    const signals = [new AbortController().signal, new AbortController().signal, cancel.signal];
    const { admitted } = enterMany(gate, 3, signals);
    await until(() => admitted.length === 1);
    cancel.abort();
    await until(() => admitted.length === 2);
    expect(admitted).toEqual([0, 2]);
    expect(gate.counts).toEqual({ active: 2, waiting: 1 });
  });
});
