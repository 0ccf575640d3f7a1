import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../server/json-body.js";
import { TOO_DEEP } from "../../server/protocol/serialize.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { addOfflineBoss } from "../support/runtime-fixture.js";

/**
 * Input that used to crash a route or be ignored (issue 16, items 4, 6 and 8), sent as a client
 * would: each answer is a 4xx naming the field, and nothing is written.
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** `{"a":{"a":…1}}` as JSON text, `levels` objects deep. */
const nestedText = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

interface StateBody {
  values: { messages: { id: string; type: string; content: unknown }[] };
  checkpoint: { checkpoint_id: string };
}

describe("bad input over HTTP", () => {
  let http: HttpServer;
  let demo: string;
  beforeEach(async () => {
    http = await startHttpServer({ users: ["demo"] });
    demo = http.tokenOf("demo");
    await addOfflineBoss(http.fixture.runtime, "demo");
  });
  afterEach(async () => {
    await http.stop();
  });

  /** A thread of demo's named `ghost` with one finished run (a task call included). */
  async function ghost(): Promise<StateBody> {
    const run = await http.call("POST", "/threads/ghost/runs/wait", {
      token: demo,
      body: { assistant_id: "boss", input: human("Compare tides"), if_not_exists: "create" },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const state = await http.call<StateBody>("GET", "/threads/ghost/state", { token: demo });
    expect(state.status).toBe(200);
    return state.body;
  }

  describe("deep JSON (item 4)", () => {
    it("refuses run metadata 100,000 deep with a 422 naming the field, and starts no run", async () => {
      await ghost();
      const result = await http.call("POST", "/threads/ghost/runs", {
        token: demo,
        raw: `{"assistant_id":"boss","input":${JSON.stringify(human("hi"))},"metadata":${nestedText(100_000)}}`,
      });
      const error = expectError(result, 422, "VALIDATION_FAILED");
      expect(error.field).toBe("metadata.a.a.a…");
      expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
      // The route keeps answering, and no run was started.
      const runs = await http.call<{ run_id: string }[]>("GET", "/threads/ghost/runs", {
        token: demo,
      });
      expect(runs.status).toBe(200);
      expect(runs.body).toHaveLength(1);
    });

    it("refuses thread metadata 5,000 deep, writing no thread; 64 levels pass, 65 do not", async () => {
      const deep = await http.call("POST", "/threads", {
        token: demo,
        raw: `{"thread_id":"deep","metadata":${nestedText(5_000)}}`,
      });
      expect(expectError(deep, 422, "VALIDATION_FAILED").field).toBe("metadata.a.a.a…");
      expectError(await http.call("GET", "/threads/deep", { token: demo }), 404, "NOT_FOUND");

      // The body is level 1, so metadata may hold 62 more objects under its own.
      const atLimit = await http.call<{ metadata: unknown }>("POST", "/threads", {
        token: demo,
        raw: `{"metadata":${nestedText(MAX_JSON_DEPTH - 1)}}`,
      });
      expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
      expect(JSON.stringify(atLimit.body.metadata)).toBe(nestedText(MAX_JSON_DEPTH - 1));
      const overLimit = await http.call("POST", "/threads", {
        token: demo,
        raw: `{"metadata":${nestedText(MAX_JSON_DEPTH)}}`,
      });
      expectError(overLimit, 422, "VALIDATION_FAILED");
    });

    it("refuses a 1 MiB body of brackets (500,000 deep) on the agents API too, naming the path", async () => {
      const brackets = await http.call("POST", "/api/agent", {
        token: demo,
        raw: `${"[".repeat(500_000)}${"]".repeat(500_000)}`,
      });
      expect(expectError(brackets, 422, "VALIDATION_FAILED").field).toBe("[0][0][0][0]…");
      const agent = await http.call("POST", "/api/agent", {
        token: demo,
        raw: `{"slug":"x","name":"x","description":"x","config_json":{"context":{"model":"offline","system_prompt":${nestedText(200)}}}}`,
      });
      expect(expectError(agent, 422, "VALIDATION_FAILED").field).toBe(
        "config_json.context.system_prompt.a…",
      );
      const listed = await http.call<{ agents: unknown[] }>("GET", "/api/agent", { token: demo });
      expect(listed.body.agents).toHaveLength(1);
    });

    it("reads thread metadata stored 100,000 deep before the limit, clipped instead of a 500", async () => {
      await ghost();
      // As an older server stored it: straight into the row.
      const db = new SQLite(join(http.fixture.dataDir, "agents.sqlite"));
      try {
        db.prepare("UPDATE threads SET metadata = ? WHERE owner_uid = ?").run(
          `{"kept":"yes","deep":${nestedText(100_000)}}`,
          "demo",
        );
      } finally {
        db.close();
      }
      const thread = await http.call<{ metadata: Record<string, unknown> }>(
        "GET",
        "/threads/ghost",
        { token: demo },
      );
      expect(thread.status, JSON.stringify(thread.body).slice(0, 300)).toBe(200);
      expect(thread.body.metadata.kept).toBe("yes");
      expect(JSON.stringify(thread.body.metadata)).toContain(JSON.stringify(TOO_DEEP));
      const search = await http.call<unknown[]>("POST", "/threads/search", {
        token: demo,
        body: {},
      });
      expect(search.status).toBe(200);
      expect(search.body).toHaveLength(1);
    });

    it("refuses a fork whose message nests deeper than a checkpoint can be read back, keeping the thread readable", async () => {
      const before = await ghost();
      // 47 levels inside a content block: within the body limit, but LangChain's loader reads a
      // stored value back only to 50 levels, so the thread's every state read would fail.
      const block = `{"type":"text","text":"deep","extra":${nestedText(47)}}`;
      const fork = await http.call("POST", "/threads/ghost/state", {
        token: demo,
        raw: `{"values":{"messages":[{"type":"human","content":[${block}]}]}}`,
      });
      const error = expectError(fork, 422, "VALIDATION_FAILED");
      expect(error.field).toBe("values.messages[0]");
      expect(error.message).toContain("content[0].extra…");
      for (const [method, path, body] of [
        ["GET", "/threads/ghost/state", undefined],
        ["POST", "/threads/ghost/history", { limit: 2 }],
      ] as const) {
        const read = await http.call<StateBody | StateBody[]>(method, path, {
          token: demo,
          ...(body ? { body } : {}),
        });
        expect(read.status, `${method} ${path}`).toBe(200);
      }
      const after = await http.call<StateBody>("GET", "/threads/ghost/state", { token: demo });
      expect(after.body.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    });
  });

  describe("multipart and fork input (item 6)", () => {
    const upload = (contentType: string) =>
      fetch(`${http.base}/threads/t/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${demo}`, "content-type": contentType },
        body: "garbage",
      });

    it("answers a garbage multipart body, or one without a boundary, with a 422 naming the upload", async () => {
      for (const contentType of ["multipart/form-data; boundary=zzz", "multipart/form-data"]) {
        const response = await upload(contentType);
        const body = (await response.json()) as { error: { code: string; field?: string } };
        expect(response.status, contentType).toBe(422);
        expect(body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "file" });
      }
      expectError(await http.call("GET", "/threads/t", { token: demo }), 404, "NOT_FOUND");
    });

    it("refuses a fork with an unknown message type, a non-list subagent_runs or an unknown as_node, writing nothing", async () => {
      const before = await ghost();
      const cases: [unknown, string, string][] = [
        [
          { values: { messages: [{ type: "martian", content: "x" }] } },
          "values.messages[0].type",
          '"human"',
        ],
        [{ values: { subagent_runs: "x" } }, "values.subagent_runs", "list of task records"],
        [{ values: {}, as_node: "nope" }, "as_node", '"model_request"'],
        [{ values: { smuggled: 1 } }, "values.smuggled", "messages or subagent_runs"],
        [
          { values: { messages: [{ type: "tool", content: "x" }] } },
          "values.messages[0].tool_call_id",
          "tool_call_id",
        ],
        [
          { values: { messages: [{ type: "remove", id: "nope" }] } },
          "values.messages[0].id",
          "remove",
        ],
        [
          { values: { messages: [{ type: "human", content: 5 }] } },
          "values.messages[0].content",
          "content",
        ],
      ];
      for (const [body, field, hint] of cases) {
        const result = await http.call("POST", "/threads/ghost/state", { token: demo, body });
        const error = expectError(result, 422, "VALIDATION_FAILED");
        expect(error.field, JSON.stringify(body)).toBe(field);
        expect(error.message, JSON.stringify(body)).toContain(hint);
      }
      const after = await http.call<StateBody>("GET", "/threads/ghost/state", { token: demo });
      expect(after.body.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);

      // A well-formed fork still works.
      const edited = await http.call("POST", "/threads/ghost/state", {
        token: demo,
        body: {
          values: { messages: [{ type: "human", content: "edited" }] },
          as_node: "model_request",
        },
      });
      expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    });
  });

  describe("unknown checkpoints (item 8)", () => {
    it("answers an unknown history cursor with 404 naming before, and a known one with what is older", async () => {
      const state = await ghost();
      const result = await http.call("POST", "/threads/ghost/history", {
        token: demo,
        body: { before: "nope" },
      });
      const error = expectError(result, 404, "NOT_FOUND");
      expect(error.field).toBe("before");
      expect(error.message).toContain('"nope"');
      const nested = await http.call("POST", "/threads/ghost/history", {
        token: demo,
        body: { before: { configurable: { checkpoint_id: "nope" } } },
      });
      expect(expectError(nested, 404, "NOT_FOUND").field).toBe("before");

      const all = await http.call<StateBody[]>("POST", "/threads/ghost/history", {
        token: demo,
        body: { limit: 100 },
      });
      const older = await http.call<StateBody[]>("POST", "/threads/ghost/history", {
        token: demo,
        body: { limit: 100, before: state.checkpoint.checkpoint_id },
      });
      expect(older.status).toBe(200);
      expect(older.body.map((item) => item.checkpoint.checkpoint_id)).toEqual(
        all.body.slice(1).map((item) => item.checkpoint.checkpoint_id),
      );
    });

    it("answers an unknown checkpoint_id the same 404 on every route that takes one, creating nothing", async () => {
      await ghost();
      const state = await http.call("GET", "/threads/ghost/state/nope", { token: demo });
      expect(expectError(state, 404, "NOT_FOUND").field).toBe("checkpoint_id");
      const fork = await http.call("POST", "/threads/ghost/state", {
        token: demo,
        body: { values: {}, checkpoint_id: "nope" },
      });
      expect(expectError(fork, 404, "NOT_FOUND").field).toBe("checkpoint_id");
      for (const path of ["/threads/ghost/runs/wait", "/threads/fresh/runs/wait"]) {
        const run = await http.call("POST", path, {
          token: demo,
          body: { assistant_id: "boss", checkpoint_id: "nope", if_not_exists: "create" },
        });
        expect(expectError(run, 404, "NOT_FOUND").field, path).toBe("checkpoint_id");
        const branched = await http.call("POST", path, {
          token: demo,
          body: {
            assistant_id: "boss",
            checkpoint: { checkpoint_id: "nope" },
            if_not_exists: "create",
          },
        });
        expect(expectError(branched, 404, "NOT_FOUND").field, path).toBe("checkpoint");
      }
      // The refused run on a new id created no thread.
      expectError(await http.call("GET", "/threads/fresh", { token: demo }), 404, "NOT_FOUND");
    });
  });
});
