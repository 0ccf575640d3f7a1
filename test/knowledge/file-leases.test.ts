import { afterEach, describe, expect, inject, it } from "vitest";
import { KbFileStore } from "../../knowledge/files.js";
import { KnowledgeBaseRepository } from "../../knowledge/repository.js";
import { type Database, openPostgresDatabase, openSqliteDatabase } from "../../store/database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const LEASE_MS = 60_000;

/**
 * Both ingest queues claim through `knowledge/file-leases.ts`: the oldest waiting file first,
 * never one file twice while its lease holds, and a lapsed lease's file again. On PostgreSQL two
 * pools (two processes) claim at once and split the files between them.
 */
describe.each(["sqlite", "postgres"] as const)("file leases on %s", (kind) => {
  const open: Database[] = [];
  afterEach(async () => {
    for (const database of open.splice(0)) await database.close();
  });

  async function databases(count: number): Promise<Database[]> {
    if (kind === "sqlite") {
      const database = await openSqliteDatabase(":memory:");
      open.push(database);
      return Array.from({ length: count }, () => database);
    }
    const url = await createTestDatabase(inject("postgresUrl"), "file_leases");
    for (let index = 0; index < count; index++) open.push(await openPostgresDatabase(url));
    return open.slice(-count);
  }

  /** A knowledge base with `names` added one millisecond apart, on a clock the test moves. */
  async function filesOn(database: Database, names: string[]) {
    let now = Date.parse("2026-12-05T10:00:00.000Z");
    const clock = { now: () => new Date(now) };
    const kb = await new KnowledgeBaseRepository(database, clock).create("alice", { name: "kb" });
    const files = new KbFileStore(database, clock);
    const ids: string[] = [];
    for (const name of names) {
      now += 1;
      ids.push((await files.add(kb.id, name, "txt", Buffer.from(`${name} text`))).file.id);
    }
    return { files, ids, clock, advance: (ms: number) => (now += ms) };
  }

  it("claims the oldest queued file first, each once while its lease holds", async () => {
    const [database] = await databases(1);
    const { files, ids } = await filesOn(database as Database, ["a.txt", "b.txt"]);

    const first = await files.claimNext(LEASE_MS);
    const second = await files.claimNext(LEASE_MS);
    expect(first?.file).toMatchObject({ id: ids[0], status: "indexing" });
    expect(first?.content.toString()).toBe("a.txt text");
    expect(second?.file.id).toBe(ids[1]);
    expect(await files.claimNext(LEASE_MS)).toBeUndefined();
  });

  it("claims a file again once its lease lapsed (its indexer died)", async () => {
    const [database] = await databases(1);
    const { files, ids, advance } = await filesOn(database as Database, ["a.txt"]);

    expect((await files.claimNext(LEASE_MS))?.file.id).toBe(ids[0]);
    advance(LEASE_MS - 1);
    expect(await files.claimNext(LEASE_MS)).toBeUndefined();
    advance(2);
    expect((await files.claimNext(LEASE_MS))?.file.id).toBe(ids[0]);
  });

  it("splits the files between two claimers at once, none claimed twice", async () => {
    const [one, two] = await databases(2);
    const names = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"];
    const { files, ids, clock } = await filesOn(one as Database, names);
    const other = new KbFileStore(two as Database, clock);

    const claims = await Promise.all(
      names.flatMap(() => [files.claimNext(LEASE_MS), other.claimNext(LEASE_MS)]),
    );
    const claimed = claims.flatMap((claim) => (claim ? [claim.file.id] : []));
    expect(claimed.sort()).toEqual([...ids].sort());
  });

  it("leases vectors work the same way, dropping nothing twice", async () => {
    const [database] = await databases(1);
    const { files, ids, advance } = await filesOn(database as Database, ["a.txt", "b.txt"]);
    await (database as Database).db
      .updateTable("kb_files")
      .set({ status: "indexed", vectors: "pending" })
      .execute();

    expect((await files.claimEmbedding(LEASE_MS))?.id).toBe(ids[0]);
    expect((await files.claimEmbedding(LEASE_MS))?.id).toBe(ids[1]);
    expect(await files.claimEmbedding(LEASE_MS)).toBeUndefined();
    expect((await files.claimNext(LEASE_MS))?.file.id).toBeUndefined();
    advance(LEASE_MS + 1);
    expect((await files.claimEmbedding(LEASE_MS))?.id).toBe(ids[0]);
  });
});
