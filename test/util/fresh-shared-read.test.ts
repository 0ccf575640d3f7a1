import { describe, expect, it } from "vitest";
import { freshSharedRead } from "../../util/fresh-shared-read.js";

/** A read whose answers are released by hand: each query answers the value at its sending. */
function controlledRead() {
  let value = 0;
  const pending: { answer: number; release: () => void; fail: (error: Error) => void }[] = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      const answer = value;
      pending.push({ answer, release: () => resolve(answer), fail: reject });
    });
  return {
    read,
    write: () => {
      value += 1;
    },
    sent: () => pending.length,
    release: (index: number) => pending[index]?.release(),
    fail: (index: number) => pending[index]?.fail(new Error("connection lost")),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("freshSharedRead", () => {
  it("sends a lone caller's query at once", async () => {
    const source = controlledRead();
    const shared = freshSharedRead(source.read);
    const answer = shared();
    expect(source.sent()).toBe(1);
    source.release(0);
    expect(await answer).toBe(0);
  });

  it("never answers a caller from a query sent before its call, and shares the next one", async () => {
    const source = controlledRead();
    const shared = freshSharedRead(source.read);
    const first = shared();
    // A write commits after the first query was sent, then three callers ask.
    source.write();
    const later = [shared(), shared(), shared()];
    expect(source.sent()).toBe(1);
    source.release(0);
    expect(await first).toBe(0);
    await turn();
    // One query for the three, sent after they asked: it sees the write.
    expect(source.sent()).toBe(2);
    source.release(1);
    expect(await Promise.all(later)).toEqual([1, 1, 1]);
  });

  it("sends the waiting callers' query even when the one in flight fails", async () => {
    const source = controlledRead();
    const shared = freshSharedRead(source.read);
    const first = shared();
    const second = shared();
    source.fail(0);
    await expect(first).rejects.toThrow("connection lost");
    await turn();
    expect(source.sent()).toBe(2);
    source.release(1);
    expect(await second).toBe(0);
    // Nothing in flight any more: the next caller's query goes at once.
    const third = shared();
    expect(source.sent()).toBe(3);
    source.release(2);
    expect(await third).toBe(0);
  });
});
