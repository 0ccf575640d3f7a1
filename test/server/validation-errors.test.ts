import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, type HttpServer, runIdOf, startHttpServer } from "../support/http-server.js";
import { addOfflineBoss } from "../support/runtime-fixture.js";

/**
 * What a request refused by its route's schema is told: `field` (the first failing place, dotted
 * for a body, the parameter's name for a query string), the value received, shortened, and the
 * fix (the allowed values of an enum, the expected type, the bounds). And a JSON body with a
 * prototype-polluting key: refused by name, not as "not valid JSON".
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });

describe("schema refusals over HTTP", () => {
  let http: HttpServer;
  let token: string;
  let runId: string;
  beforeAll(async () => {
    http = await startHttpServer({ users: ["demo"] });
    token = http.tokenOf("demo");
    await addOfflineBoss(http.fixture.runtime, "demo");
    const run = await http.call("POST", "/threads/ghost/runs/wait", {
      token,
      body: { assistant_id: "boss", input: human("Compare tides"), if_not_exists: "create" },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    runId = runIdOf(run);
  });
  afterAll(async () => {
    await http.stop();
  });

  const refusal = async (method: string, path: string, body?: unknown, raw?: string) =>
    expectError(
      await http.call(method, path, {
        token,
        ...(body === undefined ? {} : { body }),
        ...(raw === undefined ? {} : { raw }),
      }),
      422,
      "VALIDATION_FAILED",
    );
  const run = (extra: Record<string, unknown>) => ({
    assistant_id: "boss",
    input: human("x"),
    ...extra,
  });

  it("names a body field, the value and the allowed values of an enum", async () => {
    const cases: [Record<string, unknown>, string, string[]][] = [
      [
        run({ multitask_strategy: 42 }),
        "multitask_strategy",
        ["42", '"reject", "enqueue", "interrupt", "rollback"'],
      ],
      [run({ multitask_strategy: "later" }), "multitask_strategy", ['"later"', '"rollback"']],
      [run({ on_disconnect: "later" }), "on_disconnect", ['"later"', '"cancel", "continue"']],
      [run({ if_not_exists: true }), "if_not_exists", ["true", '"create", "reject"']],
      [run({ durability: 1 }), "durability", ['"sync", "async", "exit"']],
    ];
    for (const [body, field, parts] of cases) {
      const error = await refusal("POST", "/threads/ghost/runs", body);
      expect(error.field, JSON.stringify(body)).toBe(field);
      for (const part of parts) expect(error.message, JSON.stringify(body)).toContain(part);
    }
  });

  it("names the expected type of a mistyped or missing field", async () => {
    const typed = await refusal("POST", "/threads/ghost/runs", run({ assistant_id: 123 }));
    expect(typed.field).toBe("assistant_id");
    expect(typed.message).toBe("assistant_id: 123 is not valid: send a string");
    const missing = await refusal("POST", "/threads/ghost/runs", { input: human("x") });
    expect(missing.field).toBe("assistant_id");
    expect(missing.message).toBe("assistant_id is missing: send a string");
    const flag = await refusal("POST", "/threads/ghost/runs", run({ stream_subgraphs: "yes" }));
    expect(flag).toMatchObject({ field: "stream_subgraphs" });
    expect(flag.message).toContain("send true or false");
    const root = await refusal("PATCH", "/threads/ghost", undefined, "[1]");
    expect(root.field).toBe("body");
    expect(root.message).toContain("send an object");
  });

  it("names nested places in the API's dotted form, through unions and lists", async () => {
    const nested = await refusal("POST", "/threads/ghost/history", {
      before: { configurable: { checkpoint_id: 5 } },
    });
    expect(nested.field).toBe("before.configurable.checkpoint_id");
    expect(nested.message).toContain("send a string");
    const either = await refusal("POST", "/threads/ghost/history", { before: 5 });
    expect(either.field).toBe("before");
    expect(either.message).toContain("send a string or an object");
    const listed = await refusal("POST", "/threads/search", { select: ["values", "context"] });
    expect(listed.field).toBe("select[1]");
    // The schema's own words, which name what is kept.
    expect(listed.message).toContain('"context" is not valid: use some of thread_id');
    const bounded = await refusal("POST", "/threads/ghost/history", { limit: 0 });
    expect(bounded).toMatchObject({ field: "limit" });
    expect(bounded.message).toContain("send a number at least 1");
    const namespace = await refusal("POST", "/threads/ghost/history", {
      checkpoint: { checkpoint_ns: "child" },
    });
    expect(namespace.field).toBe("checkpoint.checkpoint_ns");
    expect(namespace.message).toContain('only the root namespace "" has states here');
  });

  it("names a query parameter, its value and the fix", async () => {
    const runs = `/threads/ghost/runs/${runId}`;
    const cases: [string, string, string, string[]][] = [
      ["GET", "/threads/ghost/runs?limit=abc", "limit", ['"abc"', "send a number"]],
      ["GET", "/threads/ghost/runs?limit=1.5", "limit", ['"1.5"', "send an integer"]],
      ["GET", "/threads/ghost/runs?limit=5000", "limit", ["send a number at most 1000"]],
      ["GET", "/threads/ghost/runs?status=done", "status", ['"done"', '"pending", "running"']],
      ["POST", `${runs}/cancel?wait=maybe`, "wait", ['"maybe"', '"0", "1", "true", "false"']],
      ["GET", `${runs}/join?cancel_on_disconnect=yes`, "cancel_on_disconnect", ['"yes"', '"1"']],
      ["GET", "/api/agent?include_subagents=1", "include_subagents", ['"true", "false"']],
    ];
    for (const [method, path, field, parts] of cases) {
      const error = await refusal(method, path);
      expect(error.field, path).toBe(field);
      expect(error.message, path).toContain(`${field} (query parameter): `);
      for (const part of parts) expect(error.message, path).toContain(part);
    }
    const unknown = await refusal("GET", "/api/agent?zzz=1");
    expect(unknown.field).toBe("zzz");
    expect(unknown.message).toContain("not a parameter of this route: leave it out");
  });

  it("shortens a long value, and never repeats a value under a secret's name", async () => {
    const long = await refusal(
      "POST",
      "/threads/ghost/runs",
      run({ multitask_strategy: "y".repeat(10_000) }),
    );
    expect(long.message).toContain(`"${"y".repeat(40)}`);
    expect(long.message).toContain("…");
    expect(long.message.length).toBeLessThan(200);
    const secret = await refusal("GET", "/api/agent?api_key=hunter2");
    expect(secret.field).toBe("api_key");
    expect(secret.message).not.toContain("hunter2");
  });

  describe("prototype-polluting keys in a JSON body", () => {
    it("refuses __proto__ anywhere by name, with a 422 naming its path, creating nothing", async () => {
      const cases: [string, string, string][] = [
        ['{"__proto__":{"polluted":true}}', "__proto__", 'a key named "__proto__" is refused'],
        [
          '{"metadata":{"list":[{"a":1},{"__proto__":{"x":1}}]}}',
          "metadata.list[1].__proto__",
          'a key named "__proto__" is refused',
        ],
        [
          '{"metadata":{"constructor":{"prototype":{"polluted":true}}}}',
          "metadata.constructor.prototype",
          'a "prototype" key inside a key named "constructor" is refused',
        ],
      ];
      for (const [raw, field, what] of cases) {
        const error = await refusal("POST", "/threads", undefined, raw);
        expect(error.field, raw).toBe(field);
        expect(error.message, raw).toBe(
          `${field}: ${what} (prototype pollution guard): rename the key`,
        );
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const count = await http.call("POST", "/threads/count", { token, body: {} });
      expect(count.body).toBe(1);
    });

    it("keeps a plain constructor key, and answers malformed JSON as before", async () => {
      const made = await http.call<{ metadata: Record<string, unknown> }>("POST", "/threads", {
        token,
        raw: '{"metadata":{"constructor":"kept","prototype":1}}',
      });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body.metadata).toMatchObject({ constructor: "kept", prototype: 1 });
      const malformed = await http.call("POST", "/threads", { token, raw: '{"a":' });
      expectError(malformed, 400, "MALFORMED_JSON");
    });
  });
});
