import { expect } from "vitest";
import { ERROR_CATEGORY, type ErrorCode } from "../../errors.js";
import { createServer, type ServerOptions, type SubagentGraphServer } from "../../server/app.js";
import { makeRuntime, type RuntimeFixture } from "./runtime-fixture.js";

/** A user of a running test server, with one valid token. */
export interface HttpUser {
  uid: string;
  token: string;
  /** The token's id, for revoking it. */
  tokenId: string;
}

/** What {@link HttpServer.call} sends besides method and path. */
export interface CallOptions {
  /** Sent as `Authorization: Bearer <token>` (unless `headers` sets authorization itself). */
  token?: string;
  /** Serialized as JSON (with `content-type: application/json`). */
  body?: unknown;
  /** Sent as it is, for malformed or oversized bodies (content type: JSON unless `headers` says). */
  raw?: string;
  headers?: Record<string, string>;
}

/** An HTTP answer: the body parsed as JSON when it is JSON, else its text ("" when empty). */
export interface CallResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** The body of every error answer. */
export interface ErrorBody {
  error: {
    code: string;
    category: string;
    message: string;
    field?: string;
    details?: Record<string, unknown>;
  };
}

/** A server on an ephemeral port over a fresh runtime, with users and their tokens. */
export interface HttpServer {
  fixture: RuntimeFixture;
  server: SubagentGraphServer;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The users it was started with, by uid. */
  users: Record<string, HttpUser>;
  /** The token of a user it was started with. */
  tokenOf(uid: string): string;
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<CallResult<T>>;
  /** Cancels runs, closes the server, disposes of the runtime. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startHttpServer}. */
export interface StartHttpServerOptions {
  /** Users to add, each with one token. Default `["alice"]`. */
  users?: string[];
  server?: ServerOptions;
  runtime?: Parameters<typeof makeRuntime>[0];
}

/**
 * Starts {@link createServer} over {@link makeRuntime} (memory saver unless told otherwise) on
 * 127.0.0.1 with an ephemeral port, adds the users and issues a token for each.
 */
export async function startHttpServer(options: StartHttpServerOptions = {}): Promise<HttpServer> {
  const fixture = await makeRuntime({ saver: "memory", ...options.runtime });
  let server: SubagentGraphServer | undefined;
  try {
    server = await createServer(fixture.runtime, options.server);
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const users: Record<string, HttpUser> = {};
    for (const uid of options.users ?? ["alice"]) {
      await fixture.runtime.users.add(uid);
      const issued = await fixture.runtime.users.issueToken(uid);
      users[uid] = { uid, token: issued.token, tokenId: issued.id };
    }
    const running = server;
    let stopped = false;
    return {
      fixture,
      server: running,
      base,
      users,
      tokenOf(uid) {
        const user = users[uid];
        if (!user) throw new Error(`no user "${uid}" on this test server`);
        return user.token;
      },
      call: (method, path, callOptions) => call(base, method, path, callOptions),
      async stop() {
        if (stopped) return;
        stopped = true;
        await running.runs.cancelAll();
        await running.app.close();
        await fixture.dispose();
      },
    };
  } catch (error) {
    await server?.app.close();
    await fixture.dispose();
    throw error;
  }
}

async function call<T>(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, options.headers);
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  const isJson = (response.headers.get("content-type") ?? "").includes("application/json");
  return {
    status: response.status,
    body: (isJson && text !== "" ? JSON.parse(text) : text) as T,
    headers: response.headers,
  };
}

/** The id of the run an answer names in its `Content-Location` header ("" when it names none). */
export function runIdOf(answer: { headers: Headers }): string {
  return answer.headers.get("content-location")?.split("/").pop() ?? "";
}

/**
 * Asserts an error answer: `status`, `code`, and exactly the shape
 * `{ error: { code, category, message, field?, details? } }` (the code's category, a non-empty
 * message, details an object of ids, no other keys). Returns the error.
 */
export function expectError(result: CallResult, status: number, code: string): ErrorBody["error"] {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.headers.get("content-type") ?? "").toContain("application/json");
  const body = result.body as ErrorBody;
  expect(Object.keys(body)).toEqual(["error"]);
  const keys = Object.keys(body.error)
    .filter((key) => key !== "field" && key !== "details")
    .sort();
  expect(keys).toEqual(["category", "code", "message"]);
  expect(body.error.code).toBe(code);
  expect(body.error.category).toBe(ERROR_CATEGORY[code as ErrorCode]);
  if ("details" in body.error) expect(typeof body.error.details).toBe("object");
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  if ("field" in body.error) expect(typeof body.error.field).toBe("string");
  return body.error;
}
