import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedCall } from "../../models/scripted.js";
import { freePort } from "../support/free-port.js";
import { type HttpMcpServer, startEverythingHttp } from "../support/mcp-servers.js";
import { mainAgentPayload } from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const lastTool = (call: ScriptedCall) => call.messages.at(-1) as ToolMessage | undefined;
const echo = (message: string) => ({
  reply: { toolCalls: [{ name: "mcp_web_echo", args: { message } }] },
});

/** A remote MCP server over Streamable HTTP (the reference server, started by the test). */
describe("MCP tools over Streamable HTTP", () => {
  const harness = new ScriptedHarness("memory");
  let server: HttpMcpServer | undefined;
  afterEach(async () => {
    await harness.dispose();
    await server?.stop();
    server = undefined;
  });

  it("calls a remote server's tools, and reconnects after the server restarts", async () => {
    const port = await freePort();
    server = await startEverythingHttp(port);
    const main = harness.model("main", [
      echo("one"),
      {
        expect: (call) => expect(lastTool(call)?.content).toBe("Echo: one"),
        reply: { text: "first" },
      },
      echo("two"),
      {
        expect: (call) => {
          expect(lastTool(call)?.status).toBe("error");
          expect(lastTool(call)?.content).toMatch(
            /^MCP server "web" is unavailable: .+; it will be reconnected on the next call$/,
          );
        },
        reply: { text: "the server is down" },
      },
      echo("three"),
      {
        // A new session on the restarted server.
        expect: (call) => expect(lastTool(call)?.content).toBe("Echo: three"),
        reply: { text: "back" },
      },
    ]);
    const runtime = await harness.setup(
      { "scripted:main": main },
      { runtime: { mcpServers: { web: { url: server.url } } } },
    );
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", undefined, { tools: [] }),
    );

    expect((await runtime.run({ uid: "alice", agent: "boss", input: "1" })).output).toBe("first");
    expect(await runtime.mcp.list({ connect: false })).toMatchObject([
      { name: "web", transport: "http", status: "connected" },
    ]);

    await server.stop();
    const down = await runtime.run({ uid: "alice", agent: "boss", input: "2" });
    expect(down.output).toBe("the server is down");
    expect((await runtime.mcp.list({ connect: false }))[0]?.status).toBe("unavailable");

    server = await startEverythingHttp(port);
    const back = await runtime.run({ uid: "alice", agent: "boss", input: "3" });
    expect(back.output).toBe("back");
    harness.assertScriptsComplete();
  });
});
