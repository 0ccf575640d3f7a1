import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteDatabase } from "../../store/database.js";
import { StampedReads } from "../../store/stamped-reads.js";
import { runStampedReadsSuite } from "./stamped-reads-suite.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// Two connections to one file, as two processes (a server and the CLI) have them.
runStampedReadsSuite("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "stamped-reads-"));
  dirs.push(dir);
  const file = join(dir, "agents.sqlite");
  const first = await openSqliteDatabase(file);
  const second = await openSqliteDatabase(file);
  return { first, second };
});

/** A stamp the test moves by hand. */
function movableStamp() {
  let version = 0;
  return {
    stamp: () => `v${version}`,
    move: () => {
      version += 1;
    },
  };
}

describe("StampedReads", () => {
  it("loads once per key while the stamp stays, and again after it moves", async () => {
    const { stamp, move } = movableStamp();
    const reads = new StampedReads(stamp);
    let loads = 0;
    const load = async () => {
      loads += 1;
      return { loaded: loads };
    };
    expect(await reads.read("a", load)).toEqual({ loaded: 1 });
    expect(await reads.read("a", load)).toEqual({ loaded: 1 });
    expect(await reads.read("b", load)).toEqual({ loaded: 2 });
    move();
    expect(await reads.read("a", load)).toEqual({ loaded: 3 });
  });

  it("shares one load among concurrent reads of a key", async () => {
    const reads = new StampedReads(() => "same");
    let loads = 0;
    const load = async () => {
      loads += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return loads;
    };
    const values = await Promise.all(Array.from({ length: 8 }, () => reads.read("k", load)));
    expect(values).toEqual(Array(8).fill(1));
    expect(loads).toBe(1);
  });

  it("does not keep a failed load", async () => {
    const reads = new StampedReads(() => "same");
    await expect(
      reads.read("k", async () => {
        throw new Error("database down");
      }),
    ).rejects.toThrow("database down");
    expect(await reads.read("k", async () => "recovered")).toBe("recovered");
  });

  it("keeps a load that began before the stamp moved out of the newer stamp's reads", async () => {
    const { stamp, move } = movableStamp();
    const reads = new StampedReads(stamp);
    let release: (value: string) => void = () => undefined;
    const slow = reads.read("k", () => new Promise<string>((resolve) => (release = resolve)));
    move();
    // Read under the new stamp while the old load is still running: a load of its own.
    const fresh = reads.read("k", async () => "new");
    release("old");
    expect(await slow).toBe("old");
    expect(await fresh).toBe("new");
    expect(await reads.read("k", async () => "unused")).toBe("new");
  });

  it("drops the oldest kept read past its bound", async () => {
    const reads = new StampedReads(() => "same", { maxKept: 2 });
    let loads = 0;
    const load = async () => {
      loads += 1;
      return loads;
    };
    await reads.read("a", load);
    await reads.read("b", load);
    await reads.read("c", load);
    expect(loads).toBe(3);
    await reads.read("c", load);
    await reads.read("b", load);
    expect(loads).toBe(3);
    await reads.read("a", load);
    expect(loads).toBe(4);
  });
});
