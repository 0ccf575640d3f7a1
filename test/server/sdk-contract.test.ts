/**
 * The contract with `@langchain/langgraph-sdk`: every method of its `Client` (found by
 * reflection, so a method a new SDK adds fails here until it is served or refused on purpose),
 * called against our server, either answers what the SDK's types declare (checked with the zod
 * schemas of `test/support/sdk-shapes.ts`) or is refused at once with code `UNSUPPORTED` naming
 * the method: 501 on POST/PATCH, 405 on GET/PUT/DELETE, which the SDK does not retry.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentRecord } from "../../agents/schema.js";
import { createServer, type SubagentGraphServer } from "../../server/app.js";
import { UNSUPPORTED_ENDPOINTS } from "../../server/routes/unsupported.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";
import {
  assistantShape,
  runShape,
  streamEventShape,
  threadShape,
  threadStateShape,
  updateStateShape,
  valuesShape,
} from "../support/sdk-shapes.js";

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** What a test case has at hand. */
interface Context {
  client: Client;
  boss: AgentRecord;
  /** A new thread of alice's with one finished run. */
  ranThread(): Promise<string>;
  /** A new, empty thread of alice's. */
  emptyThread(): Promise<string>;
}

type Case =
  | { call: (context: Context) => Promise<unknown>; shape: z.ZodType }
  | { call: (context: Context) => Promise<unknown>; unsupported: 405 | 501 };

/** Reads a stream to its end. */
async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const events = z.array(streamEventShape).min(1);

/**
 * The expectation of each SDK method, keyed `<sub-client>.<method>`. A served method names the
 * shape of its answer (its SDK return type); the others are refused.
 */
const CASES: Record<string, Case> = {
  "assistants.get": { call: (c) => c.client.assistants.get(c.boss.id), shape: assistantShape },
  "assistants.search": {
    call: (c) => c.client.assistants.search({ limit: 5 }),
    shape: z.array(assistantShape).min(1),
  },
  "assistants.count": {
    call: (c) => c.client.assistants.count({ graphId: "boss" }),
    shape: z.literal(1),
  },
  "assistants.getGraph": { call: (c) => c.client.assistants.getGraph(c.boss.id), unsupported: 405 },
  "assistants.getSchemas": {
    call: (c) => c.client.assistants.getSchemas(c.boss.id),
    unsupported: 405,
  },
  "assistants.getSubgraphs": {
    call: (c) => c.client.assistants.getSubgraphs(c.boss.id),
    unsupported: 405,
  },
  "assistants.create": {
    call: (c) => c.client.assistants.create({ graphId: "boss" }),
    unsupported: 501,
  },
  "assistants.update": {
    call: (c) => c.client.assistants.update(c.boss.id, { name: "x" }),
    unsupported: 501,
  },
  "assistants.delete": { call: (c) => c.client.assistants.delete(c.boss.id), unsupported: 405 },
  "assistants.getVersions": {
    call: (c) => c.client.assistants.getVersions(c.boss.id),
    unsupported: 501,
  },
  "assistants.setLatest": {
    call: (c) => c.client.assistants.setLatest(c.boss.id, 1),
    unsupported: 501,
  },

  "threads.get": {
    call: async (c) => c.client.threads.get(await c.ranThread()),
    shape: threadShape,
  },
  "threads.create": { call: (c) => c.client.threads.create(), shape: threadShape },
  "threads.update": {
    call: async (c) => c.client.threads.update(await c.emptyThread(), { metadata: { a: 1 } }),
    shape: threadShape,
  },
  "threads.delete": {
    call: async (c) => c.client.threads.delete(await c.ranThread()),
    shape: z.undefined(),
  },
  "threads.search": {
    call: async (c) => {
      await c.ranThread();
      await c.emptyThread();
      return c.client.threads.search({ limit: 10 });
    },
    shape: z.array(threadShape).min(2),
  },
  "threads.count": {
    call: async (c) => {
      const threadId = await c.emptyThread();
      await c.client.threads.update(threadId, { metadata: { counted: threadId } });
      return c.client.threads.count({ metadata: { counted: threadId } });
    },
    shape: z.literal(1),
  },
  "threads.getState": {
    // An empty thread's state too: the SDK's `checkpoint` is never null.
    call: async (c) =>
      Promise.all([
        c.client.threads.getState(await c.ranThread()),
        c.client.threads.getState(await c.emptyThread()),
      ]),
    shape: z.tuple([threadStateShape, threadStateShape]),
  },
  "threads.getHistory": {
    call: async (c) => c.client.threads.getHistory(await c.ranThread(), { limit: 3 }),
    shape: z.array(threadStateShape).length(3),
  },
  "threads.updateState": {
    call: async (c) => {
      const threadId = await c.ranThread();
      const state = await c.client.threads.getState(threadId);
      const [first] = (state.values as { messages: { id: string }[] }).messages;
      return c.client.threads.updateState(threadId, {
        values: { messages: [{ type: "human", content: "edited", id: first?.id }] },
      });
    },
    shape: updateStateShape,
  },
  "threads.copy": {
    call: async (c) => c.client.threads.copy(await c.ranThread()),
    unsupported: 501,
  },
  "threads.prune": { call: (c) => c.client.threads.prune(["t"]), unsupported: 501 },
  "threads.patchState": {
    call: async (c) => c.client.threads.patchState(await c.ranThread(), { note: "x" }),
    unsupported: 501,
  },
  "threads.joinStream": {
    call: async (c) => drain(c.client.threads.joinStream(await c.ranThread())),
    unsupported: 405,
  },
  "threads.stream": {
    call: async (c) => {
      const stream = c.client.threads.stream(await c.emptyThread(), { assistantId: c.boss.id });
      try {
        return await stream.submitRun({ input: human("hi") });
      } finally {
        await stream.close();
      }
    },
    // The thread protocol ("v2"): its run.start answers the run's id (test/server/thread-protocol.test.ts).
    shape: z.object({ run_id: z.string() }),
  },

  "runs.create": {
    call: async (c) => {
      const threadId = await c.emptyThread();
      const run = await c.client.runs.create(threadId, c.boss.id, { input: human("hi") });
      await c.client.runs.join(threadId, run.run_id);
      return run;
    },
    shape: runShape,
  },
  "runs.stream": {
    call: async (c) =>
      drain(
        c.client.runs.stream(await c.emptyThread(), c.boss.id, {
          input: human("hi"),
          streamMode: ["values", "updates"],
        }),
      ),
    shape: events,
  },
  "runs.wait": {
    call: async (c) => c.client.runs.wait(await c.emptyThread(), c.boss.id, { input: human("hi") }),
    shape: valuesShape,
  },
  "runs.join": {
    call: async (c) => {
      const threadId = await c.emptyThread();
      const run = await c.client.runs.create(threadId, c.boss.id, { input: human("hi") });
      return c.client.runs.join(threadId, run.run_id);
    },
    shape: valuesShape,
  },
  "runs.joinStream": {
    call: async (c) => {
      const threadId = await c.emptyThread();
      const run = await c.client.runs.create(threadId, c.boss.id, { input: human("hi") });
      return drain(c.client.runs.joinStream(threadId, run.run_id));
    },
    shape: events,
  },
  "runs.list": {
    call: async (c) => c.client.runs.list(await c.ranThread()),
    shape: z.array(runShape).length(1),
  },
  "runs.get": {
    call: async (c) => {
      const threadId = await c.ranThread();
      const [run] = await c.client.runs.list(threadId);
      return c.client.runs.get(threadId, run?.run_id ?? "");
    },
    shape: runShape,
  },
  "runs.cancel": {
    call: async (c) => {
      const threadId = await c.emptyThread();
      const run = await c.client.runs.create(threadId, c.boss.id, { input: human("hi") });
      return c.client.runs.cancel(threadId, run.run_id, true);
    },
    shape: z.undefined(),
  },
  "runs.createBatch": {
    call: (c) => c.client.runs.createBatch([{ assistantId: c.boss.id, input: human("hi") }]),
    unsupported: 501,
  },
  "runs.cancelMany": {
    call: async (c) => c.client.runs.cancelMany({ threadId: await c.ranThread() }),
    unsupported: 501,
  },
  "runs.delete": {
    call: async (c) => {
      const threadId = await c.ranThread();
      const [run] = await c.client.runs.list(threadId);
      return c.client.runs.delete(threadId, run?.run_id ?? "");
    },
    unsupported: 405,
  },

  "crons.createForThread": {
    call: async (c) =>
      c.client.crons.createForThread(await c.emptyThread(), c.boss.id, { schedule: "* * * * *" }),
    unsupported: 501,
  },
  "crons.create": {
    call: (c) => c.client.crons.create(c.boss.id, { schedule: "* * * * *" }),
    unsupported: 501,
  },
  "crons.update": { call: (c) => c.client.crons.update("cron-1", {}), unsupported: 501 },
  "crons.delete": { call: (c) => c.client.crons.delete("cron-1"), unsupported: 405 },
  "crons.search": { call: (c) => c.client.crons.search(), unsupported: 501 },
  "crons.count": { call: (c) => c.client.crons.count(), unsupported: 501 },

  "store.putItem": { call: (c) => c.client.store.putItem(["a"], "k", { v: 1 }), unsupported: 405 },
  "store.getItem": { call: (c) => c.client.store.getItem(["a"], "k"), unsupported: 405 },
  "store.deleteItem": { call: (c) => c.client.store.deleteItem(["a"], "k"), unsupported: 405 },
  "store.searchItems": { call: (c) => c.client.store.searchItems(["a"]), unsupported: 501 },
  "store.listNamespaces": { call: (c) => c.client.store.listNamespaces(), unsupported: 501 },

  "~ui.getComponent": {
    call: (c) => c.client["~ui"].getComponent(c.boss.id, "card"),
    unsupported: 501,
  },
};

/**
 * `<sub-client>.<method>` for every public method of the `Client`'s sub-clients (its properties
 * that are SDK clients: they have `fetch` and `streamWithRetry`), up to their common base class.
 */
function discoverMethods(client: Client): string[] {
  const names: string[] = [];
  for (const [key, sub] of Object.entries(client)) {
    if (typeof sub !== "object" || sub === null || typeof sub.streamWithRetry !== "function") {
      continue;
    }
    let proto: object | null = Object.getPrototypeOf(sub);
    // The base class (it defines `streamWithRetry`) holds plumbing, not API methods.
    while (proto && !Object.hasOwn(proto, "streamWithRetry")) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        const value = Object.getOwnPropertyDescriptor(proto, name)?.value;
        if (name !== "constructor" && typeof value === "function") names.push(`${key}.${name}`);
      }
      proto = Object.getPrototypeOf(proto);
    }
  }
  return [...new Set(names)].sort();
}

const discovered = discoverMethods(new Client({ apiUrl: "http://127.0.0.1:9", apiKey: null }));

describe("every @langchain/langgraph-sdk Client method: served as typed, or UNSUPPORTED", {
  timeout: 20_000,
}, () => {
  let fixture: RuntimeFixture;
  let server: SubagentGraphServer;
  let context: Context;

  beforeAll(async () => {
    fixture = await makeRuntime({ saver: "sqlite" });
    server = await createServer(fixture.runtime);
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    await fixture.runtime.users.add("alice");
    const { token } = await fixture.runtime.users.issueToken("alice");
    await fixture.runtime.agents.create("alice", subagentPayload("researcher", "offline"));
    const boss = await fixture.runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "offline", ["researcher"]),
    );
    const client = new Client({ apiUrl: base, apiKey: token });
    const emptyThread = async () => (await client.threads.create()).thread_id;
    context = {
      client,
      boss,
      emptyThread,
      ranThread: async () => {
        const threadId = await emptyThread();
        await client.runs.wait(threadId, boss.id, { input: human("Why are there tides?") });
        return threadId;
      },
    };
  });
  afterAll(async () => {
    await server?.runs.cancelAll();
    await server?.app.close();
    await fixture?.dispose();
  });

  it("has an expectation for every method the SDK has, and a method for every expectation", () => {
    expect(discovered.length).toBeGreaterThan(40);
    expect(discovered.filter((name) => !(name in CASES))).toEqual([]);
    expect(Object.keys(CASES).filter((name) => !discovered.includes(name))).toEqual([]);
    // Every route we refuse is named after a method the SDK has.
    const refused = new Set(UNSUPPORTED_ENDPOINTS.map((endpoint) => endpoint.sdk.split(" ")[0]));
    expect([...refused].filter((name) => !discovered.includes(name ?? ""))).toEqual([]);
  });

  for (const name of discovered) {
    it(name, async () => {
      const expectation = CASES[name];
      if (!expectation) {
        throw new Error(
          `the SDK has a method this test does not know: serve ${name} (and add its shape here) or refuse it in server/routes/unsupported.ts`,
        );
      }
      if ("shape" in expectation) {
        const answer = await expectation.call(context);
        const parsed = expectation.shape.safeParse(answer);
        expect(parsed.success, `${name}: ${parsed.error?.message}\n${JSON.stringify(answer)}`).toBe(
          true,
        );
        return;
      }
      const failure = await expectation.call(context).then(
        (answer) => new Error(`${name} answered ${JSON.stringify(answer)}`),
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ status: expectation.unsupported });
      const body = JSON.parse((failure as { text?: string }).text ?? "{}") as {
        error?: { code?: string; message?: string };
      };
      expect(body.error?.code).toBe("UNSUPPORTED");
      expect(body.error?.message).toMatch(
        new RegExp(
          `^${name.replace(/[.~]/g, "\\$&")}( \\(without a thread\\))? is not supported by this server: .+`,
        ),
      );
    });
  }
});
