import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentRecord, ShareConfig } from "../../agents/schema.js";
import {
  type CallResult,
  type ErrorBody,
  expectError,
  type HttpServer,
  runIdOf,
  startHttpServer,
} from "../support/http-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

type Sharing = "private" | "shared" | "editor" | "public";
type Action = "read" | "update" | "delete" | "run";

const SHARING: Record<Sharing, Partial<ShareConfig>> = {
  private: { mode: "private" },
  shared: { mode: "users", uids: ["bob"] },
  // Editors may see what they may change, whatever the mode.
  editor: { mode: "private", editors: ["bob"] },
  public: { mode: "public" },
};

type Expected = { status: number; code?: string };
const EXPECTED: Record<Sharing, Record<Action, Expected>> = {
  private: {
    read: { status: 404, code: "NOT_FOUND" },
    update: { status: 404, code: "NOT_FOUND" },
    delete: { status: 404, code: "NOT_FOUND" },
    run: { status: 404, code: "NOT_FOUND" },
  },
  shared: {
    read: { status: 200 },
    update: { status: 403, code: "FORBIDDEN" },
    delete: { status: 403, code: "FORBIDDEN" },
    run: { status: 200 },
  },
  editor: {
    read: { status: 200 },
    update: { status: 200 },
    delete: { status: 204 },
    run: { status: 200 },
  },
  public: {
    read: { status: 200 },
    update: { status: 403, code: "FORBIDDEN" },
    delete: { status: 403, code: "FORBIDDEN" },
    run: { status: 200 },
  },
};

const CASES = (Object.keys(SHARING) as Sharing[]).flatMap((sharing) =>
  (["read", "update", "delete", "run"] as const).map((action) => ({
    sharing,
    action,
    expected: EXPECTED[sharing][action],
  })),
);

const human = (content: string) => ({ messages: [{ type: "human", content }] });

interface FinalValues {
  messages: { type: string; content: unknown }[];
  subagent_runs: { child_thread_id: string; subagent_type: string; status: string }[];
}

describe.each(["sqlite", "postgres"] as const)(
  "permissions over HTTP on %s (alice owns, bob acts)",
  (saver) => {
    let http: HttpServer;
    let alice: string;
    let bob: string;
    beforeEach(async () => {
      http = await startHttpServer({ users: ["alice", "bob"], runtime: { saver } });
      alice = http.tokenOf("alice");
      bob = http.tokenOf("bob");
    });
    afterEach(async () => {
      await http.stop();
    });

    async function aliceAgent(payload: Record<string, unknown>): Promise<AgentRecord> {
      const created = await http.call<AgentRecord>("POST", "/api/agent", {
        token: alice,
        body: payload,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body;
    }

    /** Bob's new thread. */
    async function threadOf(token: string): Promise<string> {
      const thread = await http.call<{ thread_id: string }>("POST", "/threads", {
        token,
        body: {},
      });
      expect(thread.status).toBe(200);
      return thread.body.thread_id;
    }

    /** Does `action` on agent `id` as bob. */
    async function act(action: Action, id: string): Promise<CallResult> {
      switch (action) {
        case "read":
          return http.call("GET", `/api/agent/${id}`, { token: bob });
        case "update":
          return http.call("PUT", `/api/agent/${id}`, {
            token: bob,
            body: { name: "bob was here" },
          });
        case "delete":
          return http.call("DELETE", `/api/agent/${id}`, { token: bob });
        case "run": {
          const threadId = await threadOf(bob);
          return http.call("POST", `/threads/${threadId}/runs/wait`, {
            token: bob,
            body: { assistant_id: id, input: human("hi") },
          });
        }
      }
    }

    it.each(CASES)(
      "$sharing agent: bob's $action → $expected.status",
      async ({ sharing, action, expected }) => {
        const agent = await aliceAgent({
          ...mainAgentPayload("boss", "offline", undefined),
          share_config: SHARING[sharing],
        });
        const result = await act(action, agent.id);

        if (expected.code) {
          const error = expectError(result, expected.status, expected.code);
          if (expected.code === "FORBIDDEN") expect(error.message).toContain("read-only for you");
        } else {
          expect(result.status, JSON.stringify(result.body)).toBe(expected.status);
        }

        if (expected.status === 404) {
          // Indistinguishable from an agent that does not exist at all.
          const absent = randomUUID();
          const control = await act(action, absent);
          expectError(control, 404, "NOT_FOUND");
          const hidden = JSON.stringify(result.body).replaceAll(agent.id, "<id>");
          expect(hidden).toBe(JSON.stringify(control.body).replaceAll(absent, "<id>"));
          expect(hidden).not.toContain("boss");
          expect(hidden).not.toContain("alice");
        }

        // What bob's action left behind, as alice sees it.
        const stored = await http.call<AgentRecord>("GET", `/api/agent/${agent.id}`, {
          token: alice,
        });
        switch (`${action}:${result.status}`) {
          case "read:200":
            expect(result.body).toEqual(agent);
            break;
          case "update:200":
            expect(result.body).toMatchObject({
              name: "bob was here",
              version: 2,
              owner_uid: "alice",
            });
            expect(stored.body).toEqual(result.body);
            break;
          case "delete:204":
            expectError(stored, 404, "NOT_FOUND");
            break;
          case "run:200": {
            const values = result.body as FinalValues;
            expect(values).not.toHaveProperty("__error__");
            expect(values.messages.map((message) => message.type)).toEqual(["human", "ai"]);
            expect(values.messages[0]?.content).toBe("hi");
            expect(String(values.messages[1]?.content)).toContain("[offline model]");
            expect(stored.body).toEqual(agent);
            break;
          }
          default:
            // Refused: nothing changed.
            expect(stored.body).toEqual(agent);
        }
      },
    );

    it("lists for bob exactly the agents he may see", async () => {
      const made: Record<string, AgentRecord> = {};
      for (const sharing of Object.keys(SHARING) as Sharing[]) {
        made[sharing] = await aliceAgent({
          ...mainAgentPayload(`agent-${sharing}`, "offline", undefined),
          share_config: SHARING[sharing],
        });
      }
      await aliceAgent({
        ...subagentPayload("helper", "offline"),
        share_config: { mode: "public" },
      });
      const listed = await http.call<{ agents: AgentRecord[] }>("GET", "/api/agent", {
        token: bob,
      });
      expect(listed.body.agents.map((agent) => agent.slug)).toEqual([
        "agent-shared",
        "agent-editor",
        "agent-public",
      ]);
      const all = await http.call<{ agents: AgentRecord[] }>(
        "GET",
        "/api/agent?include_subagents=true",
        { token: bob },
      );
      expect(all.body.agents.map((agent) => agent.slug)).toEqual([
        "agent-shared",
        "agent-editor",
        "agent-public",
        "helper",
      ]);
    });

    describe("threads", () => {
      /** Alice's public boss with one subagent, run once on a thread of alice's. */
      async function aliceRun() {
        await aliceAgent(subagentPayload("researcher", "offline"));
        const boss = await aliceAgent({
          ...mainAgentPayload("boss", "offline", ["researcher"]),
          share_config: { mode: "public" },
        });
        const threadId = await threadOf(alice);
        const run = await http.call<FinalValues>("POST", `/threads/${threadId}/runs/wait`, {
          token: alice,
          body: { assistant_id: boss.id, input: human("Why are there tides?") },
        });
        expect(run.status, JSON.stringify(run.body)).toBe(200);
        const runId = runIdOf(run);
        expect(runId).not.toBe("");
        const child = run.body.subagent_runs[0];
        expect(child?.subagent_type).toBe("researcher");
        expect(child?.status).toBe("completed");
        return {
          boss,
          threadId,
          runId,
          values: run.body,
          childThreadId: child?.child_thread_id ?? "",
        };
      }

      it("hides alice's thread, its state, history, runs and files from bob", async () => {
        const { boss, threadId, runId } = await aliceRun();
        const checkpoint = await http.call<{ checkpoint: { checkpoint_id: string } }>(
          "GET",
          `/threads/${threadId}/state`,
          { token: alice },
        );
        expect(checkpoint.status).toBe(200);
        const checkpointId = checkpoint.body.checkpoint.checkpoint_id;
        const outputs = encodeURIComponent("/home/gem/user-data/outputs/answer.txt");

        const attempts: [string, string, unknown?][] = [
          ["GET", `/threads/${threadId}`],
          ["PATCH", `/threads/${threadId}`, { metadata: { owner: "bob" } }],
          ["GET", `/threads/${threadId}/state`],
          ["GET", `/threads/${threadId}/state/${checkpointId}`],
          ["POST", `/threads/${threadId}/history`, {}],
          ["GET", `/threads/${threadId}/runs`],
          ["GET", `/threads/${threadId}/runs/${runId}`],
          ["GET", `/threads/${threadId}/runs/${runId}/join`],
          ["GET", `/threads/${threadId}/runs/${runId}/stream`],
          ["POST", `/threads/${threadId}/runs/${runId}/cancel`],
          // Bob may run alice's public agent, but not on her thread.
          ["POST", `/threads/${threadId}/runs/wait`, { assistant_id: boss.id, input: human("x") }],
          ["POST", `/threads/${threadId}/runs`, { assistant_id: boss.id, input: human("x") }],
          ["GET", `/threads/${threadId}/files`],
          ["GET", `/threads/${threadId}/files/content?path=${outputs}`],
        ];
        // Each refusal is the answer bob gets for a thread that does not exist (ids aside).
        const absentThread = randomUUID();
        for (const [method, path, body] of attempts) {
          const send = (target: string) =>
            http.call(method, path.replace(threadId, target), {
              token: bob,
              ...(body !== undefined ? { body } : {}),
            });
          const error = expectError(await send(threadId), 404, "NOT_FOUND");
          expect(error.message, `${method} ${path}`).not.toContain("alice");
          const control = expectError(await send(absentThread), 404, "NOT_FOUND");
          expect(JSON.stringify(error).replaceAll(threadId, "<thread>"), `${method} ${path}`).toBe(
            JSON.stringify(control).replaceAll(absentThread, "<thread>"),
          );
        }

        // Bob's search by her id finds nothing of hers.
        const search = await http.call<{ thread_id: string }[]>("POST", "/threads/search", {
          token: bob,
          body: { ids: [threadId] },
        });
        expect(search).toMatchObject({ status: 200, body: [] });

        // Creating under her id (an upload, a run with if_not_exists, a create) makes a thread of
        // bob's own by that name, exactly as under an id nobody uses: nothing bob sends tells him
        // whether she has one (server/thread-scope.ts). Her thread is untouched.
        const bobsDefault = await http.call("POST", "/api/agent", {
          token: bob,
          body: { ...mainAgentPayload("mine", "offline", undefined), is_default: true },
        });
        expect(bobsDefault.status).toBe(201);
        const claims = async (target: string) => {
          const form = new FormData();
          form.append("file", new Blob(["bob's notes\n"]), "notes.txt");
          const upload = await fetch(`${http.base}/threads/${target}/files`, {
            method: "POST",
            headers: { authorization: `Bearer ${bob}` },
            body: form,
          });
          const run = await http.call<FinalValues>("POST", `/threads/${target}/runs/wait`, {
            token: bob,
            body: { assistant_id: boss.id, input: human("mine now"), if_not_exists: "create" },
          });
          const again = await http.call("POST", "/threads", {
            token: bob,
            body: { thread_id: target, if_exists: "do_nothing" },
          });
          const found = await http.call<{ thread_id: string }[]>("POST", "/threads/search", {
            token: bob,
            body: { ids: [target], select: ["thread_id"] },
          });
          return [
            upload.status,
            run.status,
            run.body.messages.map((message) => message.content).slice(0, 1),
            again.status,
            (again.body as { thread_id?: string }).thread_id === target,
            found.body,
          ];
        };
        const underHers = await claims(threadId);
        expect(underHers).toEqual([201, 200, ["mine now"], 200, true, [{ thread_id: threadId }]]);
        const unused = randomUUID();
        expect(JSON.stringify(await claims(unused)).replaceAll(unused, "<id>")).toBe(
          JSON.stringify(underHers).replaceAll(threadId, "<id>"),
        );
        const uploads = await http.call<{ files: unknown[] }>(
          "GET",
          `/threads/${threadId}/files?folder=${encodeURIComponent("/home/gem/user-data/uploads")}`,
          { token: alice },
        );
        expect(uploads).toMatchObject({ status: 200, body: { files: [] } });

        // Alice still sees her thread, untouched by bob's attempts.
        const mine = await http.call<{ thread_id: string; metadata: Record<string, unknown> }>(
          "GET",
          `/threads/${threadId}`,
          { token: alice },
        );
        expect(mine.status).toBe(200);
        expect(mine.body.metadata).not.toHaveProperty("owner");
        const runs = await http.call<{ run_id: string }[]>("GET", `/threads/${threadId}/runs`, {
          token: alice,
        });
        expect(runs.body.map((run) => run.run_id)).toEqual([runId]);
        const state = await http.call<{ values: FinalValues }>(
          "GET",
          `/threads/${threadId}/state`,
          {
            token: alice,
          },
        );
        expect(state.body.values.messages.map((message) => message.content)).not.toContain(
          "mine now",
        );
        expect(state.body.values.messages[0]?.content).toBe("Why are there tides?");
      });

      it("shows a child thread to the parent's owner only", async () => {
        const { threadId, childThreadId, values } = await aliceRun();
        expect(childThreadId.startsWith(`${threadId}_sub_researcher_`)).toBe(true);
        const path = `/threads/${threadId}/subagents/${childThreadId}`;

        const child = await http.call<{
          thread_id: string;
          parent_thread_id: string;
          subagent_type: string;
          run: { child_thread_id: string };
          values: { messages: { type: string; content: unknown }[] };
        }>("GET", path, { token: alice });
        expect(child.status, JSON.stringify(child.body)).toBe(200);
        expect(child.body).toMatchObject({
          thread_id: childThreadId,
          parent_thread_id: threadId,
          subagent_type: "researcher",
          run: { child_thread_id: childThreadId },
        });
        const messages = child.body.values.messages;
        expect(messages[0]?.type).toBe("human");
        expect(messages.at(-1)?.type).toBe("ai");
        // The child's answer is what the parent got back from its task call.
        const toolAnswer = values.messages.find((message) => message.type === "tool");
        expect(String(toolAnswer?.content)).toContain(String(messages.at(-1)?.content));

        // Every refusal reads exactly like a child that does not exist (ids aside): bob's on
        // alice's thread, bob's through a thread of his own, and alice's through another thread.
        const hex = childThreadId.split("_").pop() ?? "";
        const absentChild = `${threadId}_sub_researcher_${"0".repeat(hex.length)}`;
        const masked = async (
          token: string,
          parent: string,
          childId: string,
        ): Promise<ErrorBody["error"]> => {
          const result = await http.call("GET", `/threads/${parent}/subagents/${childId}`, {
            token,
          });
          const error = expectError(result, 404, "NOT_FOUND");
          return JSON.parse(
            JSON.stringify(error).replaceAll(childId, "<child>").replaceAll(parent, "<parent>"),
          );
        };
        const absent = await masked(alice, threadId, absentChild);
        expect(absent.field).toBe("child_thread_id");
        const bobsThread = await threadOf(bob);
        const otherThread = await threadOf(alice);
        expect(await masked(bob, threadId, childThreadId)).toEqual(absent);
        expect(await masked(bob, bobsThread, childThreadId)).toEqual(absent);
        expect(await masked(alice, otherThread, childThreadId)).toEqual(absent);
        expect(await masked(alice, threadId, "not-a-child-id")).toEqual(absent);
      });
    });
  },
);
