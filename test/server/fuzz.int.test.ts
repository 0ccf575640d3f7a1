import { createHash } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSUPPORTED_ENDPOINTS } from "../../server/routes/unsupported.js";
import { type HttpServer, runIdOf, startHttpServer } from "../support/http-server.js";
import {
  deepText,
  MALFORMED_TEXTS,
  mutate,
  ODD_SEGMENTS,
  percentEncode,
  Rng,
  randomString,
  randomValue,
} from "../support/json-fuzz.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

/**
 * The route fuzz pass (issue 16): every route the server registers gets hostile input from a
 * seeded generator (`test/support/json-fuzz.ts`): random JSON of every type in its body, deep
 * and huge bodies, malformed text, wrong content types, mutations of a valid body, odd path
 * segments, odd query strings and `Last-Event-ID`s. Asserted for every probe: no 5xx; a 4xx
 * wrote nothing (every row of the store is compared before and after, and the checkpoint saver
 * must see no commit at all); and afterwards the server still answers `/ok` and a normal run.
 * Replay a failure with `FUZZ_SEED=<seed>` (the seed is printed). The one 5xx by design is a
 * 501 `UNSUPPORTED` from a route of `server/routes/unsupported.ts` (an SDK method not served).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 16_016);
/** Bodies per route that takes one (for each of the body kinds below). */
const BODIES_PER_ROUTE = Number(process.env.FUZZ_BODIES ?? 12);

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** One route as Fastify registered it. */
interface Route {
  method: string;
  /** With `:param` segments. */
  path: string;
}

/** What one probe sends. */
interface Probe {
  kind: string;
  route: Route;
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The routes of `printRoutes({ commonPrefix: false })`: a tree of path pieces, each line
 * `<indent>├── <piece> (<METHODS>)`, the indent four characters per level.
 */
function routesOf(tree: string): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of tree.split("\n")) {
    const match = /^(.*?)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const level = [...(match[1] ?? "")].length / 4;
    stack.length = level;
    stack.push(match[2] ?? "");
    const path = stack.join("");
    for (const method of (match[3] ?? "").split(", ")) {
      if (method && method !== "HEAD" && method !== "OPTIONS") routes.push({ method, path });
    }
  }
  return routes;
}

describe("route fuzz pass", { timeout: 120_000 }, () => {
  let http: HttpServer;
  let routes: Route[];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let token: string;
  /** Real values for each path parameter: the fuzz user's own, and the other user's. */
  const own: Record<string, string> = {};
  const foreign: Record<string, string> = {};
  /** What the knowledge base DELETE routes get instead of `own`'s (see `beforeAll`). */
  const doomed: Record<string, string> = {};
  let templates: Record<string, unknown>;
  let stores: SQLite.Database[] = [];

  beforeAll(async () => {
    http = await startHttpServer({ users: ["fuzz", "other"], runtime: { saver: "sqlite" } });
    token = http.tokenOf("fuzz");
    const runtime = http.fixture.runtime;
    for (const uid of ["fuzz", "other"]) {
      await runtime.agents.create(uid, subagentPayload("researcher", "offline"));
      await runtime.agents.create(uid, mainAgentPayload("boss", "offline", ["researcher"]));
    }
    const solo = await runtime.agents.create("fuzz", {
      ...mainAgentPayload("solo", "offline", undefined),
      is_default: true,
    });
    const victim = await runtime.agents.create("fuzz", mainAgentPayload("victim", "offline", []));

    // One finished run with a subagent for each user, so every id a route takes exists.
    const runOf = async (uid: string, threadId: string) => {
      const result = await http.call<{ subagent_runs: { child_thread_id: string }[] }>(
        "POST",
        `/threads/${threadId}/runs/wait`,
        {
          token: http.tokenOf(uid),
          body: { assistant_id: "boss", input: human("Compare tides"), if_not_exists: "create" },
        },
      );
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      const state = await http.call<{ checkpoint: { checkpoint_id: string } }>(
        "GET",
        `/threads/${threadId}/state`,
        { token: http.tokenOf(uid) },
      );
      return {
        thread_id: threadId,
        run_id: runIdOf(result),
        checkpoint_id: state.body.checkpoint.checkpoint_id,
        child_thread_id: result.body.subagent_runs[0]?.child_thread_id ?? "",
      };
    };
    Object.assign(own, await runOf("fuzz", "fuzz-t"), { id: victim.id, assistant_id: "solo" });
    // DELETE /threads/:thread_id succeeds on the first valid probe: it gets a thread of its own,
    // so the other routes keep theirs.
    await runOf("fuzz", "fuzz-doomed");
    const others = await runtime.agents.list("other", { include_subagents: false });
    Object.assign(foreign, await runOf("other", "other-t"), {
      id: others[0]?.id ?? "",
      assistant_id: others[0]?.id ?? "",
    });
    // A knowledge base with an indexed file for each user, so the /api/kb routes are reached
    // past their 404s.
    for (const [uid, ids] of [
      ["fuzz", own],
      ["other", foreign],
    ] as const) {
      const kb = await runtime.kb.create(uid, { name: `${uid}-kb`, description: "fuzzed" });
      const [added] = await runtime.kb.addFiles(uid, kb.id, [
        { name: "notes.md", content: Buffer.from(`# Notes of ${uid}\n\nwind tunnel data\n`) },
      ]);
      Object.assign(ids, {
        kb: kb.id,
        file_id: added?.status === "accepted" ? added.file.id : "",
      });
    }
    // The deleting routes succeed on their first valid probe: they get a knowledge base and a
    // file of their own, so the other routes keep theirs.
    const doomedKb = await runtime.kb.create("fuzz", { name: "fuzz-doomed-kb" });
    const [doomedFile] = await runtime.kb.addFiles("fuzz", own.kb ?? "", [
      { name: "doomed.txt", content: Buffer.from("to be deleted\n") },
    ]);
    doomed.kb = doomedKb.id;
    doomed.file_id = doomedFile?.status === "accepted" ? doomedFile.file.id : "";
    await runtime.kb.idle();
    expect(Object.values(own).every((value) => value !== "")).toBe(true);

    templates = {
      "POST /api/agent": mainAgentPayload("fz", "offline", undefined),
      "PUT /api/agent/:id": { name: "renamed", description: "changed" },
      "POST /assistants/search": { limit: 10, offset: 0 },
      "POST /threads": { metadata: { tag: "fuzz" } },
      "POST /threads/search": { limit: 10, offset: 0, metadata: { tag: "fuzz" } },
      "PATCH /threads/:thread_id": { metadata: { tag: "fuzz" } },
      "POST /threads/:thread_id/state": { values: { messages: [human("edit").messages[0]] } },
      "POST /threads/:thread_id/history": { limit: 3 },
      "POST /threads/:thread_id/runs": { assistant_id: solo.id, input: human("q") },
      "POST /threads/:thread_id/runs/stream": { assistant_id: "solo", input: human("q") },
      "POST /threads/:thread_id/runs/wait": { assistant_id: "solo", input: human("q") },
      "POST /api/kb": { name: "fz-kb", description: "made by the fuzzer" },
      "PUT /api/kb/:kb": { description: "changed" },
      "POST /api/kb/search": { query: "wind tunnel", top_k: 3 },
    };

    await http.server.app.ready();
    routes = routesOf(http.server.app.printRoutes({ commonPrefix: false }));
    // The parse of the route tree misses nothing the OpenAPI document lists.
    const listed = new Set(routes.map((route) => `${route.method} ${route.path}`));
    const documented = Object.entries(
      (http.server.app.swagger() as { paths: Record<string, object> }).paths,
    ).flatMap(([path, operations]) =>
      Object.keys(operations).map(
        (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`,
      ),
    );
    expect(documented.length).toBeGreaterThan(20);
    expect(documented.filter((route) => !listed.has(route))).toEqual([]);
    stores = ["agents.sqlite", "checkpoints.sqlite"].map(
      (file) => new SQLite(join(http.fixture.dataDir, file), { readonly: true }),
    );
    console.log(`route fuzz: FUZZ_SEED=${SEED}, ${routes.length} routes`);
  });

  afterAll(async () => {
    for (const store of stores) store.close();
    agent.destroy();
    await http?.stop();
  });

  /**
   * What the store holds: every row of every table, hashed per table. `tokens.last_used_at` is
   * left out: authenticating a request records the token's use (at most once a minute), whatever
   * the answer.
   */
  function storeTables(): Map<string, string> {
    const store = stores[0] as SQLite.Database;
    const tables = new Map<string, string>();
    for (const name of tableNames(store)) {
      const columns = name === "tokens" ? "id, uid, token_hash, revoked_at" : "*";
      const rows = store.prepare(`SELECT ${columns} FROM "${name}"`).raw().all();
      const hash = createHash("sha256");
      for (const row of rows) hash.update(JSON.stringify(row));
      tables.set(`store.${name}`, `${rows.length}:${hash.digest("hex")}`);
    }
    return tables;
  }

  /**
   * SQLite's count of commits by other connections to each file (`PRAGMA data_version`): while
   * it stays, nothing was written. The saver has no writer but runs, so any move of its count
   * on a refused request is a write; the store's is compared table by table (see above).
   */
  function versions(): { store: number; saver: number } {
    const [store, saver] = stores.map((db) => Number(db.pragma("data_version", { simple: true })));
    return { store: store ?? 0, saver: saver ?? 0 };
  }

  /** Rows per table of the saver, to name what a refused request added. */
  function saverCounts(): Map<string, number> {
    const saver = stores[1] as SQLite.Database;
    return new Map(
      tableNames(saver).map((name) => [
        `saver.${name}`,
        (saver.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n,
      ]),
    );
  }

  function send(probe: Probe): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const body = probe.body === undefined ? undefined : Buffer.from(probe.body, "utf8");
      const base = new URL(http.base);
      const req = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          agent,
          method: probe.method,
          path: probe.path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body ? { "content-length": String(body.length) } : {}),
            ...probe.headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString("utf8"),
              headers: res.headers,
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      // A hung request is a finding too: it is reported with its probe instead of stalling.
      req.setTimeout(15_000, () => req.destroy(new Error("no answer within 15 s")));
      req.end(body);
    });
  }

  /** A path for `route` with each parameter's value chosen by `value`. */
  function pathOf(route: Route, value: (param: string) => string): string {
    return route.path.replace(/:([a-z_]+)/g, (_, param: string) => value(param));
  }

  it("answers every probe below 500, writes nothing on a 4xx, and keeps serving", async () => {
    const rng = new Rng(SEED);
    const probes: Probe[] = [];
    const ownPath = (route: Route) =>
      pathOf(route, (param) =>
        percentEncode(
          route.method === "DELETE" && route.path === "/threads/:thread_id"
            ? "fuzz-doomed"
            : route.method === "DELETE" && route.path === "/api/kb/:kb"
              ? (doomed.kb ?? "x")
              : route.method === "DELETE" && param === "file_id"
                ? (doomed.file_id ?? "x")
                : (own[param] ?? "x"),
        ),
      );
    const unsupported = new Set(UNSUPPORTED_ENDPOINTS.map((e) => `${e.method} ${e.url}`));
    const json = { "content-type": "application/json" };

    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const add = (
        kind: string,
        body: string | undefined,
        headers: Record<string, string>,
        path = ownPath(route),
      ) =>
        probes.push({
          kind,
          route,
          method: route.method,
          path,
          headers,
          ...(body === undefined ? {} : { body }),
        });

      // Path parameters: odd shapes, and the other user's real ids.
      if (route.path.includes(":")) {
        const params = [...route.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1] ?? "");
        for (const param of params) {
          for (let i = 0; i < 4; i++) {
            const odd = rng.pick(ODD_SEGMENTS);
            add(
              "path",
              undefined,
              {},
              pathOf(route, (name) => (name === param ? odd : percentEncode(own[name] ?? "x"))),
            );
          }
          add(
            "foreign id",
            undefined,
            {},
            pathOf(route, (name) => percentEncode((name === param ? foreign : own)[name] ?? "x")),
          );
        }
      }
      if (route.method === "GET") {
        // Query strings: unknown keys, repeated keys, odd values.
        for (let i = 0; i < 3; i++) {
          const query = `${percentEncode(rng.pick(["folder", "path", "include_subagents", "connect", "cancel_on_disconnect", "zzz"]))}=${percentEncode(randomString(rng).slice(0, 300))}`;
          add(
            "query",
            undefined,
            {},
            `${ownPath(route)}?${query}&${rng.chance(0.5) ? query : "a[b]=c"}`,
          );
        }
        if (route.path.endsWith("/runs/:run_id/stream")) {
          for (const id of ["abc", "-99999999999999999999", "1e400", " 3 ", "-1", "99999"]) {
            add("last-event-id", undefined, { "last-event-id": id });
          }
        }
        continue;
      }

      // Bodies, for every route that may take one.
      const template = templates[key];
      for (let i = 0; i < BODIES_PER_ROUTE; i++) {
        add("random JSON", JSON.stringify(randomValue(rng, 4)), json);
        add("deep JSON", deepText(rng, rng.pick([65, 1_000, 100_000])), json);
        add("malformed JSON", rng.pick(MALFORMED_TEXTS), json);
        if (template !== undefined) {
          add("mutated body", JSON.stringify(mutate(rng, template)), json);
          add("mutated body", JSON.stringify(mutate(rng, mutate(rng, template))), json);
        }
      }
      add("oversized body", `{"metadata":{"x":"${"y".repeat(1_100_000)}"}}`, json);
      add("wrong content type", JSON.stringify(template ?? {}), { "content-type": "text/plain" });
      add("wrong content type", "a=1&b=2", { "content-type": "application/x-www-form-urlencoded" });
      add("garbage multipart", "garbage", { "content-type": "multipart/form-data; boundary=zzz" });
      add("garbage multipart", '--zzz\r\nContent-Disposition: form-data; name="file"\r\n\r\nx', {
        "content-type": "multipart/form-data; boundary=zzz",
      });
    }

    const failures: string[] = [];
    const counts = new Map<string, { probes: number; statuses: Map<number, number> }>();
    const baseline = () => ({ versions: versions(), store: storeTables(), saver: saverCounts() });
    let known = baseline();
    for (const [index, probe] of probes.entries()) {
      const now = versions();
      if (now.store !== known.versions.store || now.saver !== known.versions.saver) {
        known = baseline();
      }
      let answer: Answer;
      try {
        answer = await send(probe);
      } catch (error) {
        failures.push(
          `#${index} ${probe.kind} ${probe.method} ${probe.path.slice(0, 120)}: no answer (${String(error)})`,
        );
        continue;
      }
      const routeKey = `${probe.route.method} ${probe.route.path}`;
      const tally = counts.get(routeKey) ?? { probes: 0, statuses: new Map() };
      tally.probes++;
      tally.statuses.set(answer.status, (tally.statuses.get(answer.status) ?? 0) + 1);
      counts.set(routeKey, tally);
      const where = `#${index} ${probe.kind} ${probe.method} ${probe.path.slice(0, 120)} body=${(probe.body ?? "").slice(0, 160)}`;
      const byDesign =
        answer.status === 501 &&
        unsupported.has(routeKey) &&
        answer.text.includes('"code":"UNSUPPORTED"');
      if (answer.status >= 500 && !byDesign) {
        failures.push(`${where}: ${answer.status} ${answer.text.slice(0, 200)}`);
      } else if (answer.status >= 400) {
        const after = versions();
        const changed: string[] = [];
        if (after.store !== known.versions.store) {
          const tables = storeTables();
          changed.push(...[...tables.keys()].filter((t) => tables.get(t) !== known.store.get(t)));
        }
        if (after.saver !== known.versions.saver) {
          const counts = saverCounts();
          const grown = [...counts.keys()].filter((t) => counts.get(t) !== known.saver.get(t));
          changed.push(...(grown.length > 0 ? grown : ["saver (rows rewritten)"]));
        }
        if (changed.length > 0) {
          failures.push(
            `${where}: ${answer.status} but wrote to ${changed.join(", ")}: ${answer.text.slice(0, 200)}`,
          );
        }
      } else {
        // A run started in the background: wait for it before the next probe.
        const location = answer.headers["content-location"];
        if (typeof location === "string" && probe.route.path.endsWith("/runs")) {
          await send({
            ...probe,
            method: "GET",
            path: `${location}/join`,
            headers: {},
            body: undefined,
          } as Probe);
        }
      }
    }

    // Still serving: health, a read, and a normal run with its subagent.
    expect(
      (
        await send({
          ...(probes[0] as Probe),
          method: "GET",
          path: "/ok",
          headers: {},
          body: undefined,
        } as Probe)
      ).status,
    ).toBe(200);
    const agents = await http.call<{ agents: unknown[] }>("GET", "/api/agent", { token });
    expect(agents.status).toBe(200);
    const run = await http.call<{ subagent_runs: { status: string }[] }>(
      "POST",
      "/threads/after-fuzz/runs/wait",
      {
        token,
        body: { assistant_id: "boss", input: human("Still there?"), if_not_exists: "create" },
      },
    );
    expect(run.status, JSON.stringify(run.body).slice(0, 300)).toBe(200);
    expect(run.body.subagent_runs[0]?.status).toBe("completed");

    const lines = [...counts.entries()].map(
      ([route, tally]) =>
        `  ${route}: ${tally.probes} probes (${[...tally.statuses.entries()]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}×${n}`)
          .join(" ")})`,
    );
    const kinds = new Map<string, number>();
    for (const probe of probes) kinds.set(probe.kind, (kinds.get(probe.kind) ?? 0) + 1);
    console.log(
      [
        `route fuzz: FUZZ_SEED=${SEED}: ${probes.length} probes over ${counts.size} routes, ${failures.length} failures`,
        `  by kind: ${[...kinds.entries()].map(([kind, n]) => `${kind} ${n}`).join(", ")}`,
        ...lines,
      ].join("\n"),
    );
    expect(new Set(routes.map((route) => `${route.method} ${route.path}`)).size).toBe(counts.size);
    expect(failures, `FUZZ_SEED=${SEED}\n${failures.join("\n")}`).toEqual([]);
  });
});

function tableNames(db: SQLite.Database): string[] {
  return (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((row) => row.name);
}
