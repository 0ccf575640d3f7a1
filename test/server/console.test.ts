import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createServer } from "../../server/app.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { makeRuntime } from "../support/runtime-fixture.js";

/**
 * The console's files are served without a token, and nothing else is: the API keeps its
 * token rule and its 404s, and a console folder without `index.html` is refused at start.
 */
describe("the web console over HTTP", () => {
  let dist: string;
  let http: HttpServer | undefined;

  beforeAll(() => {
    dist = mkdtempSync(join(tmpdir(), "sg-console-"));
    mkdirSync(join(dist, "assets"));
    writeFileSync(join(dist, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(dist, "assets", "index-abc123.js"), "console.log('hi')");
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  it("serves index.html and hashed assets without a token, with cache rules", async () => {
    http = await startHttpServer({ server: { consoleDir: dist } });

    const page = await http.call<string>("GET", "/");
    expect(page.status).toBe(200);
    expect(page.body).toContain("<title>console</title>");
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    // The page may load and call only this server, and no inline script.
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");

    const asset = await http.call<string>("GET", "/assets/index-abc123.js");
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");

    // A console rebuilt under the running server is served as it is now.
    writeFileSync(join(dist, "index.html"), "<!doctype html><title>rebuilt</title>");
    writeFileSync(join(dist, "assets", "index-def456.js"), "console.log('new')");
    expect((await http.call<string>("GET", "/")).body).toContain("rebuilt");
    expect((await http.call("GET", "/assets/index-def456.js")).status).toBe(200);

    // A missing asset is a plain 404, and never a file outside the folder.
    expectError(await http.call("GET", "/assets/missing.js"), 404, "NOT_FOUND");
    for (const hidden of ["/assets/..%2F..%2F..%2Fetc%2Fpasswd", "/assets/.env", "/assets/"]) {
      expectError(await http.call("GET", hidden), 404, "NOT_FOUND");
    }
  });

  it("keeps the token rule for the API and for writes to console paths", async () => {
    http = await startHttpServer({ server: { consoleDir: dist } });
    expectError(await http.call("GET", "/api/agent"), 401, "UNAUTHORIZED");
    expectError(await http.call("POST", "/", { body: {} }), 401, "UNAUTHORIZED");
    expectError(await http.call("GET", "/threads"), 401, "UNAUTHORIZED");
  });

  it("serves no console unless asked, and refuses a folder without index.html", async () => {
    http = await startHttpServer();
    expectError(await http.call("GET", "/"), 401, "UNAUTHORIZED");

    const empty = mkdtempSync(join(tmpdir(), "sg-console-empty-"));
    const fixture = await makeRuntime({ saver: "memory" });
    try {
      await expect(createServer(fixture.runtime, { consoleDir: empty })).rejects.toThrow(
        /has no index\.html: build the console first/,
      );
    } finally {
      await fixture.dispose();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("GET /api/catalog", () => {
  let http: HttpServer | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  it("lists models, tools, skills and MCP servers for the agent form", async () => {
    const lookup = tool(async () => "42", {
      name: "lookup_answer",
      description: "Looks up the answer.",
      schema: z.object({}),
    });
    http = await startHttpServer({
      runtime: {
        runtime: {
          tools: [lookup],
          mcpServers: { files: { command: process.execPath, args: ["-e", "0"] } },
        },
      },
    });
    await http.fixture.runtime.skills.installFiles({
      "SKILL.md": "---\nname: summarise\ndescription: Summarises a document.\n---\nBody.",
    });
    expectError(await http.call("GET", "/api/catalog"), 401, "UNAUTHORIZED");

    const catalog = await http.call<{
      models: string[];
      default_model: string;
      tools: { name: string; description: string }[];
      skills: { name: string; description: string }[];
      mcp_servers: string[];
    }>("GET", "/api/catalog", { token: http.tokenOf("alice") });

    expect(catalog.status).toBe(200);
    expect(catalog.body.models).toContain(catalog.body.default_model);
    expect(catalog.body.tools).toContainEqual({
      name: "lookup_answer",
      description: "Looks up the answer.",
    });
    expect(catalog.body.tools.map((t) => t.name)).toContain("read_file");
    expect(catalog.body.skills).toEqual([
      { name: "summarise", description: "Summarises a document." },
    ]);
    expect(catalog.body.mcp_servers).toEqual(["files"]);
  });
});
