import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { hasErrorCode } from "../../errors.js";
import { VectorStore } from "../../knowledge/vector-store.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { type Database, openDatabase } from "../../store/database.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const SECRET = "sk-kb-vectors-test-secret";

/** Two files: only the first is about colour, in a spelling the query below does not use. */
const FILES = [
  { name: "paint.txt", content: Buffer.from("Paint the fence in a bright colour every spring.\n") },
  { name: "engine.txt", content: Buffer.from("The engine oil needs changing every winter.\n") },
  {
    name: "notes.md",
    content: Buffer.from("# Notes\n\nThe garden hose leaks at the tap.\n\nBuy seeds in March.\n"),
  },
];

/**
 * Vectors in knowledge bases, through the runtime, on SQLite (sqlite-vec) and PostgreSQL
 * (vectors scanned in the process), with the real `OpenAIEmbeddings` client talking to the
 * fake OpenAI server's deterministic `/v1/embeddings` (hashed words and character trigrams:
 * "color" is near "colour", which full-text search cannot match).
 */
describe.each(["sqlite", "postgres"] as const)("knowledge base vectors on %s", (kind) => {
  const runtimes: Runtime[] = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(): Promise<{ fake: FakeOpenAIServer; database: Database; dataDir: string }> {
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    cleanups.push(() => fake.close());
    const dataDir = mkdtempSync(join(tmpdir(), "kb-vectors-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const target =
      kind === "sqlite"
        ? join(dataDir, "agents.sqlite")
        : await createTestDatabase(inject("postgresUrl"), "kb_vec");
    const database = await openDatabase(target);
    cleanups.push(() => database.close());
    return { fake, database, dataDir };
  }

  async function runtimeOn(
    database: Database,
    dataDir: string,
    knowledgeIngest = true,
    warnings: string[] = [],
  ) {
    const runtime = await createRuntime({
      dataDir,
      database,
      checkpointer: "memory",
      env: { KB_TEST_KEY: SECRET },
      warn: (message) => warnings.push(message),
      knowledgeIngest,
    });
    runtimes.push(runtime);
    return runtime;
  }

  const embedder = (fake: FakeOpenAIServer, model: string, dimensions: number) => ({
    model,
    dimensions,
    base_url: fake.url,
    api_key_env: "KB_TEST_KEY",
  });

  const files = (hits: { file: string }[]) => hits.map((hit) => hit.file);

  it("finds by meaning what full-text search misses, and full-text matches still lead", async () => {
    const { fake, database, dataDir } = await setup();
    const runtime = await runtimeOn(database, dataDir);
    const kb = await runtime.kb.create("alice", {
      name: "house",
      embedder: embedder(fake, "hash-256", 256),
    });
    await runtime.kb.create("alice", { name: "words-only" });
    await runtime.kb.addFiles("alice", "house", FILES);
    await runtime.kb.addFiles("alice", "words-only", FILES);
    await runtime.kb.idle();
    const listed = await runtime.kb.listFiles("alice", "house");
    expect(listed.map((file) => [file.status, file.vectors, file.vectors_error])).toEqual(
      Array(3).fill(["indexed", "ready", null]),
    );
    expect((await runtime.kb.listFiles("alice", "words-only")).map((file) => file.vectors)).toEqual(
      ["none", "none", "none"],
    );

    // No chunk has the word "color": full text finds nothing, the vectors find the colour one.
    expect(await runtime.kb.search("alice", { query: "color", kb: "words-only" })).toEqual([]);
    const hybrid = await runtime.kb.search("alice", { query: "color", kb: "house", top_k: 1 });
    expect(files(hybrid)).toEqual(["paint.txt"]);
    expect(hybrid[0]).toMatchObject({ kb: "house", line_start: 1, line_end: 1 });
    // A word match is still first.
    expect(files(await runtime.kb.search("alice", { query: "engine oil", kb: "house" }))[0]).toBe(
      "engine.txt",
    );

    // The client asked for floats, with the key from the variable the settings name; the key is
    // nowhere in the record.
    expect(fake.embeddingRequests.length).toBeGreaterThan(0);
    expect(new Set(fake.embeddingRequests.map((request) => request.encoding_format))).toEqual(
      new Set(["float"]),
    );
    expect(new Set(fake.embeddingRequests.map((request) => request.authorization))).toEqual(
      new Set([`Bearer ${SECRET}`]),
    );
    expect(JSON.stringify(await runtime.kb.get("alice", "house"))).not.toContain(SECRET);
    expect(fake.failures).toEqual([]);

    // Every chunk has one vector, all by the one model.
    const chunks = listed.reduce((sum, file) => sum + file.chunk_count, 0);
    const keys = await new VectorStore(database).keysOf(kb.id);
    expect([...keys.values()]).toEqual([chunks]);
  });

  it("finds a file's vectors once it is added and not after it is deleted (the search's vectors are read again)", async () => {
    const { fake, database, dataDir } = await setup();
    const runtime = await runtimeOn(database, dataDir);
    await runtime.kb.create("alice", { name: "house", embedder: embedder(fake, "hash-256", 256) });
    await runtime.kb.addFiles("alice", "house", FILES.slice(1));
    await runtime.kb.idle();
    // Searched once: this process now holds the knowledge base's vectors.
    expect(files(await runtime.kb.search("alice", { query: "color", kb: "house" }))).not.toContain(
      "paint.txt",
    );
    const [added] = await runtime.kb.addFiles("alice", "house", FILES.slice(0, 1));
    await runtime.kb.idle();
    const found = await runtime.kb.search("alice", { query: "color", kb: "house", top_k: 1 });
    expect(files(found)).toEqual(["paint.txt"]);
    if (added?.status !== "accepted") throw new Error("paint.txt was not accepted");
    await runtime.kb.deleteFile("alice", "house", added.file.id);
    expect(files(await runtime.kb.search("alice", { query: "color", kb: "house" }))).not.toContain(
      "paint.txt",
    );
  });

  it("fails each file whose vectors have another length, naming the model and both lengths", async () => {
    const { fake, database, dataDir } = await setup();
    const runtime = await runtimeOn(database, dataDir);
    const kb = await runtime.kb.create("alice", {
      name: "mismatch",
      embedder: embedder(fake, "hash-64", 128),
    });
    await runtime.kb.addFiles("alice", "mismatch", FILES.slice(0, 2));
    await runtime.kb.idle();
    const listed = await runtime.kb.listFiles("alice", "mismatch");
    expect(listed.map((file) => file.status)).toEqual(["error", "error"]);
    for (const file of listed) {
      expect(file.error).toContain('embedding model "hash-64" returns 64-dimensional vectors');
      expect(file.error).toContain("expects 128");
      expect(file.chunk_count).toBe(0);
    }
    expect(await new VectorStore(database).keysOf(kb.id)).toEqual(new Map());
  });

  it("re-embeds every chunk after a model change, searching by words only meanwhile", async () => {
    const { fake, database, dataDir } = await setup();
    const first = await runtimeOn(database, dataDir);
    const kb = await first.kb.create("alice", {
      name: "reindexed",
      embedder: embedder(fake, "hash-64", 64),
    });
    await first.kb.addFiles("alice", "reindexed", FILES);
    await first.kb.idle();
    const chunks = (await first.kb.listFiles("alice", "reindexed")).reduce(
      (sum, file) => sum + file.chunk_count,
      0,
    );
    const vectors = new VectorStore(database);
    const [oldKey] = [...(await vectors.keysOf(kb.id)).keys()];
    expect(await vectors.keysOf(kb.id)).toEqual(new Map([[oldKey, chunks]]));
    await first.close();

    // A process that does not index: the change is queued, the old vectors are gone at once,
    // and search falls back to words.
    const serving = await runtimeOn(database, dataDir, false);
    const updated = await serving.kb.update("alice", "reindexed", {
      embedder: embedder(fake, "hash-128", 128),
    });
    expect(updated.embedder).toMatchObject({ model: "hash-128", dimensions: 128 });
    expect(
      (await serving.kb.listFiles("alice", "reindexed")).map((file) => [file.status, file.vectors]),
    ).toEqual(Array(3).fill(["indexed", "pending"]));
    expect(await vectors.keysOf(kb.id)).toEqual(new Map());
    expect(await serving.kb.search("alice", { query: "color", kb: "reindexed" })).toEqual([]);
    expect(files(await serving.kb.search("alice", { query: "fence", kb: "reindexed" }))).toEqual([
      "paint.txt",
    ]);
    await serving.close();

    const indexing = await runtimeOn(database, dataDir);
    await indexing.kb.idle();
    expect((await indexing.kb.listFiles("alice", "reindexed")).map((file) => file.vectors)).toEqual(
      ["ready", "ready", "ready"],
    );
    const keys = await vectors.keysOf(kb.id);
    expect(keys.size).toBe(1);
    expect([...keys.keys()][0]).not.toBe(oldKey);
    expect([...keys.values()]).toEqual([chunks]);
    expect(
      files(await indexing.kb.search("alice", { query: "color", kb: "reindexed", top_k: 1 })),
    ).toEqual(["paint.txt"]);
    expect(fake.embeddingRequests.some((request) => request.model === "hash-128")).toBe(true);

    // Back to full-text only: the vectors go, the files have none to wait for.
    await indexing.kb.update("alice", "reindexed", { embedder: {} });
    await indexing.kb.idle();
    expect((await indexing.kb.listFiles("alice", "reindexed")).map((file) => file.vectors)).toEqual(
      ["none", "none", "none"],
    );
    expect(await vectors.keysOf(kb.id)).toEqual(new Map());
    expect(await indexing.kb.search("alice", { query: "color", kb: "reindexed" })).toEqual([]);
  });

  it("searches by words alone, with a warning, while the embedding endpoint is down", async () => {
    const { fake, database, dataDir } = await setup();
    const warnings: string[] = [];
    const runtime = await runtimeOn(database, dataDir, true, warnings);
    await runtime.kb.create("alice", { name: "offline", embedder: embedder(fake, "hash-64", 64) });
    await runtime.kb.addFiles("alice", "offline", FILES);
    await runtime.kb.idle();
    await fake.close();
    const hits = await runtime.kb.search("alice", { query: "fence colour", kb: "offline" });
    expect(files(hits)).toEqual(["paint.txt"]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^knowledge search: full-text only for "offline": embedding model "hash-64" at http:\/\/127\.0\.0\.1:\d+\/v1 failed: /,
      ),
    ]);
    expect(warnings.join("\n")).not.toContain(SECRET);
  });

  it("refuses incomplete or malformed embedder settings, naming the field and the fix", async () => {
    const { database, dataDir } = await setup();
    const runtime = await runtimeOn(database, dataDir);
    const refusal = async (embedderSettings: unknown) => {
      try {
        await runtime.kb.create("alice", { name: "bad", embedder: embedderSettings });
      } catch (error) {
        expect(hasErrorCode(error, "VALIDATION_FAILED")).toBe(true);
        return error as { field: string; message: string };
      }
      throw new Error("accepted");
    };
    expect(await refusal({ model: "m" })).toMatchObject({
      field: "embedder.dimensions",
      message: expect.stringContaining("needs model and dimensions"),
    });
    expect(await refusal({ model: "m", dimensions: 0 })).toMatchObject({
      field: "embedder.dimensions",
      message: expect.stringContaining("embedder.dimensions 0 is invalid"),
    });
    expect(await refusal({ model: "m", dimensions: 8, base_url: "ftp://x" })).toMatchObject({
      field: "embedder.base_url",
    });
    expect(
      await refusal({ model: "m", dimensions: 8, api_key_env: "sk-123 secret" }),
    ).toMatchObject({
      field: "embedder.api_key_env",
      message: expect.stringContaining("never the key itself"),
    });
    expect(await refusal({ model: "m", dimensions: 8, api_key: "x" })).toMatchObject({
      field: "embedder.api_key",
    });
  });
});
