import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSUPPORTED_ENDPOINTS } from "../../server/routes/unsupported.js";
import {
  type CallResult,
  expectError,
  type HttpServer,
  runIdOf,
  startHttpServer,
} from "../support/http-server.js";
import { addOfflineBoss } from "../support/runtime-fixture.js";

/**
 * Ids with a NUL (U+0000), on SQLite and on PostgreSQL. PostgreSQL's text cannot hold one, and a
 * query passing one fails as a whole: these used to answer 500 there (404 on SQLite). Now every
 * path parameter of every route, and every id a body carries, is refused by its schema before
 * any handler: the same 422 naming the field on both stores.
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });
const NUL = "\u0000";

/** An id-bearing body: where its NUL goes, and the field the answer must name. */
const BODY_IDS: { method: string; path: string; body: unknown; field: string }[] = [
  {
    method: "POST",
    path: "/threads/t1/history",
    body: { before: { configurable: { checkpoint_id: NUL } } },
    field: "before.configurable.checkpoint_id",
  },
  { method: "POST", path: "/threads/t1/history", body: { before: `a${NUL}` }, field: "before" },
  {
    method: "POST",
    path: "/threads/t1/history",
    body: { checkpoint: { checkpoint_id: NUL } },
    field: "checkpoint.checkpoint_id",
  },
  // A checkpoint metadata filter: PostgreSQL fails on a NUL anywhere in it, SQLite on a NUL or
  // an empty key (its JSON path `$.`).
  {
    method: "POST",
    path: "/threads/t1/history",
    body: { metadata: { a: NUL } },
    field: "metadata.a",
  },
  {
    method: "POST",
    path: "/threads/t1/history",
    body: { metadata: { [NUL]: 1 } },
    field: 'metadata["\\u0000"]',
  },
  {
    method: "POST",
    path: "/threads/t1/history",
    body: { metadata: { "": 1 } },
    field: 'metadata[""]',
  },
  {
    method: "POST",
    path: "/threads/t1/state/checkpoint",
    body: { checkpoint: { checkpoint_id: NUL } },
    field: "checkpoint.checkpoint_id",
  },
  {
    method: "POST",
    path: "/threads/t1/state",
    body: { values: {}, checkpoint_id: NUL },
    field: "checkpoint_id",
  },
  {
    method: "POST",
    path: "/threads/t1/state",
    body: { values: {}, checkpoint: { checkpoint_id: NUL } },
    field: "checkpoint.checkpoint_id",
  },
  {
    method: "POST",
    path: "/threads/t1/runs/wait",
    body: { assistant_id: "boss", checkpoint_id: NUL },
    field: "checkpoint_id",
  },
  {
    method: "POST",
    path: "/threads/t1/runs",
    body: { assistant_id: "boss", checkpoint: { checkpoint_id: NUL } },
    field: "checkpoint.checkpoint_id",
  },
  {
    method: "POST",
    path: "/threads/t1/runs/stream",
    body: { assistant_id: NUL, input: human("x") },
    field: "assistant_id",
  },
  { method: "POST", path: "/threads/search", body: { ids: ["t1", NUL] }, field: "ids[1]" },
  { method: "POST", path: "/threads/count", body: { ids: [NUL] }, field: "ids[0]" },
  { method: "POST", path: "/api/kb/search", body: { query: "x", kb: [NUL] }, field: "kb[0]" },
];

describe.each(["sqlite", "postgres"] as const)(
  "ids with NUL on %s",
  { timeout: 120_000 },
  (saver) => {
    let http: HttpServer;
    let token: string;
    let runId = "";
    let checkpointId = "";
    const call = (method: string, path: string, body?: unknown): Promise<CallResult> =>
      http.call(method, path, { token, ...(body === undefined ? {} : { body }) });

    beforeAll(async () => {
      http = await startHttpServer({ users: ["demo"], runtime: { saver } });
      token = http.tokenOf("demo");
      await addOfflineBoss(http.fixture.runtime, "demo");
      const run = await http.call("POST", "/threads/t1/runs/wait", {
        token,
        body: { assistant_id: "boss", input: human("Compare tides"), if_not_exists: "create" },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      runId = runIdOf(run);
      const state = await call("GET", "/threads/t1/state");
      checkpointId = (state.body as { checkpoint: { checkpoint_id: string } }).checkpoint
        .checkpoint_id;
    });
    afterAll(async () => {
      await http?.stop();
    });

    it("answers a NUL in any path parameter of any route with a 422 naming the parameter", async () => {
      const paths = (http.server.app.swagger() as { paths: Record<string, object> }).paths;
      const unsupported = new Set(UNSUPPORTED_ENDPOINTS.map((e) => `${e.method} ${e.url}`));
      let probed = 0;
      for (const [template, operations] of Object.entries(paths)) {
        const params = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "");
        for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
          const route = `${method} ${template.replace(/\{(\w+)\}/g, ":$1")}`;
          for (const param of params) {
            // The NUL in the middle: an id that merely contains one is refused too.
            const path = template.replace(/\{(\w+)\}/g, (_, name: string) =>
              name === param ? "a%00b" : "x",
            );
            const answer = await call(method, path);
            probed++;
            if (unsupported.has(route)) {
              // An SDK method we do not serve answers so whatever its ids (`routes/unsupported.ts`).
              expect([405, 501], `${route} (${param})`).toContain(answer.status);
              continue;
            }
            const error = expectError(answer, 422, "VALIDATION_FAILED");
            expect(error.field, `${route} (${param})`).toBe(param);
            expect(error.message, route).toContain("NUL (U+0000)");
            expect(error.message, route).toContain('"a\\u0000b"');
          }
        }
      }
      // Every route with an id: threads, runs, checkpoints, child threads, assistants, agents,
      // knowledge bases and their files.
      expect(probed).toBeGreaterThan(30);
    });

    it("answers a NUL in an id of a body with a 422 naming the field, writing nothing", async () => {
      for (const { method, path, body, field } of BODY_IDS) {
        const error = expectError(await call(method, path, body), 422, "VALIDATION_FAILED");
        expect(error.field, `${method} ${path} ${JSON.stringify(body)}`).toBe(field);
      }
      const runs = await call("GET", "/threads/t1/runs");
      expect((runs.body as unknown[]).length).toBe(1);
      const history = await call("POST", "/threads/t1/history", { limit: 100 });
      expect(history.status).toBe(200);
      expect(
        (history.body as { checkpoint: { checkpoint_id: string } }[])[0]?.checkpoint.checkpoint_id,
      ).toBe(checkpointId);
    });

    it("still serves the same ids without the NUL", async () => {
      expect((await call("GET", `/threads/t1/runs/${runId}`)).status).toBe(200);
      expect((await call("GET", `/threads/t1/state/${checkpointId}`)).status).toBe(200);
      const before = await call("POST", "/threads/t1/history", {
        before: { configurable: { checkpoint_id: checkpointId } },
        metadata: { source: "loop" },
      });
      expect(before.status, JSON.stringify(before.body)).toBe(200);
      expect((before.body as unknown[]).length).toBeGreaterThan(0);
      const search = await call("POST", "/threads/search", { ids: ["t1"] });
      expect((search.body as unknown[]).length).toBe(1);
    });
  },
);
