import { afterEach, describe, expect, it } from "vitest";
import type { KbFileRecord, KbSearchHit, KnowledgeBaseRecord } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { createKb, settledFiles, upload } from "./kb-client.js";

const SECRET = "sk-http-vectors-secret";

/**
 * Embedder settings over `/api/kb`: accepted and shown (the key's variable, never the key),
 * refused with 422 naming the field, the value and the fix; a change answers at once and the
 * files show their vectors being made again.
 */
describe("/api/kb embedder settings over HTTP", () => {
  let http: HttpServer | undefined;
  let fake: FakeOpenAIServer | undefined;
  afterEach(async () => {
    await http?.stop();
    await fake?.close();
    http = undefined;
    fake = undefined;
  });

  it("creates, shows, changes and refuses embedder settings", async () => {
    fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    http = await startHttpServer({
      users: ["alice"],
      runtime: { saver: "sqlite", env: { HTTP_KB_KEY: SECRET } },
    });
    const alice = http.tokenOf("alice");
    const settings = {
      model: "hash-128",
      dimensions: 128,
      base_url: fake.url,
      api_key_env: "HTTP_KB_KEY",
    };
    const kb = await createKb(http, alice, { name: "semantic", embedder: settings });
    expect(kb.embedder).toEqual(settings);
    await upload(http, alice, "semantic", [
      ["paint.txt", "Paint the fence in a bright colour every spring.\n"],
      ["oil.txt", "The engine oil needs changing every winter.\n"],
    ]);
    const files = await settledFiles(http, alice, kb.id);
    expect(files.map((file) => file.vectors)).toEqual(["ready", "ready"]);
    const found = await http.call<{ results: KbSearchHit[] }>("POST", "/api/kb/search", {
      token: alice,
      body: { query: "color", kb: "semantic", top_k: 1 },
    });
    expect(found.body.results.map((hit) => hit.file)).toEqual(["paint.txt"]);

    const shown = await http.call<KnowledgeBaseRecord>("GET", "/api/kb/semantic", { token: alice });
    expect(JSON.stringify(shown.body)).not.toContain(SECRET);
    // Fusion weights are the server's: a client cannot send its own.
    expectError(
      await http.call("POST", "/api/kb/search", {
        token: alice,
        body: { query: "color", fusion: { bm25: 0, vector: 1 } },
      }),
      422,
      "VALIDATION_FAILED",
    );

    const changed = await http.call<KnowledgeBaseRecord>("PUT", "/api/kb/semantic", {
      token: alice,
      body: { embedder: { ...settings, model: "hash-64", dimensions: 64 } },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.version).toBe(2);
    const again = await settledVectors(http, alice, kb.id);
    expect(again.map((file) => file.vectors)).toEqual(["ready", "ready"]);
    expect(fake.embeddingRequests.some((request) => request.model === "hash-64")).toBe(true);

    const refusals: Array<[unknown, string, string]> = [
      [{ model: "m" }, "embedder.dimensions", "needs model and dimensions"],
      [{ model: "m", dimensions: -3 }, "embedder.dimensions", "embedder.dimensions -3 is invalid"],
      [{ model: "m", dimensions: 8, base_url: "file:///etc" }, "embedder.base_url", "http(s) URL"],
      [{ model: "m", dimensions: 8, api_key: SECRET }, "embedder.api_key", "unknown field"],
    ];
    for (const [embedder, field, text] of refusals) {
      const refused = await http.call("POST", "/api/kb", {
        token: alice,
        body: { name: "bad", embedder },
      });
      const error = expectError(refused, 422, "VALIDATION_FAILED");
      expect(error.field).toBe(field);
      expect(error.message).toContain(text);
    }
    expect(fake.failures).toEqual([]);
  });
});

/** Polls until no file's vectors are pending or being made. */
async function settledVectors(
  http: HttpServer,
  token: string,
  kb: string,
  limitMs = 20_000,
): Promise<KbFileRecord[]> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const files = await settledFiles(http, token, kb);
    if (files.every((file) => file.vectors !== "pending" && file.vectors !== "embedding")) {
      return files;
    }
    if (Date.now() > deadline) throw new Error(`vectors still pending: ${JSON.stringify(files)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
