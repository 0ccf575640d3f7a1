import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpServer, startHttpServer } from "../support/http-server.js";

/**
 * A browser app on another origin uses every method our routes answer (issue 40, item 4): its
 * preflight must allow PATCH, DELETE and PUT, not only the CORS plugin's default GET, HEAD, POST.
 */

const ORIGIN = "http://app.test";

describe("CORS for a browser app on another origin", () => {
  let http: HttpServer;

  beforeAll(async () => {
    http = await startHttpServer();
  });
  afterAll(async () => {
    await http.stop();
  });

  /** The preflight a browser sends before `method` with a token and a JSON body. */
  async function preflight(path: string, method: string): Promise<Response> {
    return fetch(`${http.base}${path}`, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": method,
        "access-control-request-headers": "authorization,content-type",
      },
    });
  }

  it("allows PATCH, DELETE and PUT in the preflight, with the token and JSON headers", async () => {
    for (const [path, method] of [
      ["/threads/some-thread", "PATCH"],
      ["/threads/some-thread", "DELETE"],
      ["/api/agent/some-agent", "PUT"],
    ] as const) {
      const answer = await preflight(path, method);
      expect(answer.status, `${method} ${path}`).toBe(204);
      expect(answer.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      const allowed = (answer.headers.get("access-control-allow-methods") ?? "")
        .split(",")
        .map((name) => name.trim());
      expect(allowed).toEqual(
        expect.arrayContaining(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
      );
      const headers = (answer.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      expect(headers).toContain("authorization");
      expect(headers).toContain("content-type");
    }
  });

  it("answers the PATCH and DELETE themselves to that origin, exposing content-location", async () => {
    const token = http.tokenOf("alice");
    const created = await fetch(`${http.base}/threads`, {
      method: "POST",
      headers: {
        origin: ORIGIN,
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({}),
    });
    expect(created.status).toBe(200);
    expect(created.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };

    const patched = await fetch(`${http.base}/threads/${threadId}`, {
      method: "PATCH",
      headers: {
        origin: ORIGIN,
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ metadata: { title: "from another origin" } }),
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(((await patched.json()) as { metadata: Record<string, unknown> }).metadata.title).toBe(
      "from another origin",
    );
    const exposed = (patched.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    expect(exposed).toContain("content-location");

    const deleted = await fetch(`${http.base}/threads/${threadId}`, {
      method: "DELETE",
      headers: { origin: ORIGIN, authorization: `Bearer ${token}` },
    });
    expect(deleted.status).toBeLessThan(300);
    expect(deleted.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect((await http.call("GET", `/threads/${threadId}`, { token })).status).toBe(404);
  });
});
