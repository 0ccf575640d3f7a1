import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { ScriptedCall } from "../../models/scripted.js";
import type { McpServerConfig } from "../../tools/mcp/config.js";
import {
  everythingServer,
  filesystemServer,
  fixtureServer,
  killServer,
  processesWith,
  serverPid,
  untilAsync,
  waitForStatus,
} from "../support/mcp-servers.js";
import { isAlive } from "../support/process-alive.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";
import { expectOneRecordAndEventPair, streamRun } from "../support/task-calls.js";
import { until } from "../support/until.js";

const taskCall = (subagent_type: string, description: string, tools?: string[]) => ({
  name: "task",
  args: { description, subagent_type, ...(tools ? { tools } : {}) },
});

const lastTool = (call: ScriptedCall) => call.messages.at(-1) as ToolMessage | undefined;
const lastTools = (call: ScriptedCall, count: number) =>
  call.messages.slice(-count) as ToolMessage[];
const mcpNames = (tools: readonly string[]) => tools.filter((name) => name.startsWith("mcp_"));

/** Agents and subagents with tools from real MCP servers (npm packages over stdio). */
describe("MCP tools", () => {
  const harness = new ScriptedHarness("memory");
  let root: string;

  beforeEach(() => {
    // The filesystem server resolves symlinks, so the agents are given the real path.
    root = realpathSync(mkdtempSync(join(tmpdir(), "mcp-fs-")));
    writeFileSync(join(root, "notes.txt"), "The answer is 42.\n");
  });
  afterEach(async () => {
    await harness.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  const setup = (
    models: Parameters<ScriptedHarness["setup"]>[0],
    mcpServers: Record<string, McpServerConfig>,
  ) => harness.setup(models, { runtime: { mcpServers } });

  it("a subagent lists and calls MCP tools end to end; its parent gets the answer", async () => {
    const notes = join(root, "notes.txt");
    const main = harness.model("main", [
      {
        // The main agent chose no MCP servers: it has none of their tools.
        expect: (call) => expect(mcpNames(call.tools)).toEqual([]),
        reply: { toolCalls: [taskCall("reader", "What do the notes say?")] },
      },
      {
        expect: (call) => expect(lastTool(call)?.content).toBe("The notes say: The answer is 42."),
        reply: { text: "42" },
      },
    ]);
    const reader = harness.model("reader", [
      {
        expect: (call) =>
          expect(call.tools).toEqual(
            expect.arrayContaining(["mcp_fs_list_directory", "mcp_fs_read_text_file"]),
          ),
        reply: { toolCalls: [{ name: "mcp_fs_list_directory", args: { path: root } }] },
      },
      {
        expect: (call) => {
          expect(lastTool(call)?.status).toBe("success");
          expect(lastTool(call)?.content).toBe("[FILE] notes.txt");
        },
        reply: { toolCalls: [{ name: "mcp_fs_read_text_file", args: { path: notes } }] },
      },
      {
        // The server's real output reaches the child's next model call, as plain text.
        expect: (call) => expect(lastTool(call)?.content).toBe("The answer is 42.\n"),
        reply: { text: "The notes say: The answer is 42." },
      },
    ]);
    const runtime = await setup(
      { "scripted:main": main, "scripted:reader": reader },
      { fs: filesystemServer(root) },
    );
    // Lazy: nothing is started before a graph needs the server.
    expect(await runtime.mcp.list({ connect: false })).toMatchObject([
      { name: "fs", transport: "stdio", status: "idle", tools: [] },
    ]);
    await runtime.agents.create(
      "alice",
      subagentPayload("reader", "scripted:reader", { tools: [], mcp_servers: ["fs"] }),
    );
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", ["reader"], { mcp_servers: [] }),
    );

    const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

    expect(result.output).toBe("42");
    expect(result.subagentRuns[0]).toMatchObject({ status: "completed", rounds: 3 });
    const [fs] = await runtime.mcp.list({ connect: false });
    expect(fs).toMatchObject({ status: "connected" });
    expect(fs?.tools).toContain("mcp_fs_read_text_file");
    harness.assertScriptsComplete();
  });

  it("shares one connection per server across runs", async () => {
    const echo = (text: string) => ({
      reply: { toolCalls: [{ name: "mcp_ev_echo", args: { message: text } }] },
    });
    const main = harness.model("main", [
      echo("one"),
      { reply: { text: "first" } },
      echo("two"),
      {
        expect: (call) => expect(lastTool(call)?.content).toBe("Echo: two"),
        reply: { text: "second" },
      },
    ]);
    const runtime = await setup({ "scripted:main": main }, { ev: everythingServer() });
    await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));

    await runtime.run({ uid: "alice", agent: "boss", input: "go" });
    const pid = await serverPid(runtime, "ev");
    await runtime.run({ uid: "alice", agent: "boss", input: "again" });

    expect(await serverPid(runtime, "ev")).toBe(pid);
    harness.assertScriptsComplete();
  });

  it("passes a tool's own failure back as an error the model can read; env reaches the server", async () => {
    const main = harness.model("main", [
      {
        reply: {
          toolCalls: [
            { name: "mcp_fs_read_text_file", args: { path: join(root, "missing.txt") } },
            { name: "mcp_fs_read_text_file", args: { path: "/etc/hostname" } },
            { name: "mcp_ev_get-env", args: {} },
            { name: "mcp_ev_get-sum", args: { a: "one" } },
          ],
        },
      },
      {
        expect: (call) => {
          const [missing, outside, env, badArgs] = lastTools(call, 4);
          expect(missing?.status).toBe("error");
          expect(missing?.content).toContain(
            "MCP tool 'read_text_file' on server 'fs' returned an error",
          );
          expect(missing?.content).toContain("ENOENT");
          // The server's own sandbox refuses paths outside its folder.
          expect(outside?.status).toBe("error");
          expect(outside?.content).toContain("Access denied");
          expect(env?.status).toBe("success");
          expect(env?.content).toContain('"MCP_TEST_MARK": "marked"');
          // Arguments are checked against the server's JSON schema before any call, and the
          // answer names each problem.
          expect(badArgs?.status).toBe("error");
          expect(badArgs?.content).toContain(
            'the arguments of your "mcp_ev_get-sum" call do not fit its schema (',
          );
          expect(badArgs?.content).toContain('required property "b"');
          expect(badArgs?.content).toContain('a: Instance type "string" is invalid');
        },
        reply: { text: "handled" },
      },
    ]);
    const runtime = await setup(
      { "scripted:main": main },
      {
        fs: filesystemServer(root),
        ev: { ...everythingServer(), env: { MCP_TEST_MARK: "marked" } },
      },
    );
    await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));

    const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

    expect(result.output).toBe("handled");
    // A failing tool is not a failing server.
    const status = (await runtime.mcp.list({ connect: false })).map((s) => s.status);
    expect(status).toEqual(["connected", "connected"]);
    harness.assertScriptsComplete();
  });

  describe("allowed set", () => {
    it("narrows a subagent to the listed MCP tools and guards the others at execution", async () => {
      const written = join(root, "leak.txt");
      const main = harness.model("main", [
        { reply: { toolCalls: [taskCall("reader", "list", ["mcp_fs_list_directory"])] } },
        { reply: { text: "ok" } },
      ]);
      const reader = harness.model("reader", [
        {
          expect: (call) => expect(call.tools).toEqual(["mcp_fs_list_directory"]),
          reply: {
            toolCalls: [
              { name: "mcp_fs_write_file", args: { path: written, content: "leak" } },
              { name: "mcp_fs_list_directory", args: { path: root } },
            ],
          },
        },
        {
          expect: (call) => {
            const [refused, listed] = lastTools(call, 2);
            expect(refused?.content).toBe("tool not in allowed set: mcp_fs_write_file");
            expect(refused?.status).toBe("error");
            expect(listed?.content).toBe("[FILE] notes.txt");
          },
          reply: { text: "listed" },
        },
      ]);
      const runtime = await setup(
        { "scripted:main": main, "scripted:reader": reader },
        { fs: filesystemServer(root) },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("reader", "scripted:reader", { tools: [], mcp_servers: ["fs"] }),
      );
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["reader"]));

      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      // The guarded call never reached the server: nothing was written.
      expect(existsSync(written)).toBe(false);
      harness.assertScriptsComplete();
    });

    it("refuses a task call naming an MCP tool of a server the subagent was not given", async () => {
      const main = harness.model("main", [
        { reply: { toolCalls: [taskCall("reader", "echo", ["mcp_ev_echo"])] } },
        {
          expect: (call) => {
            expect(lastTool(call)?.status).toBe("error");
            expect(lastTool(call)?.content).toContain(
              'refused: tools "mcp_ev_echo" are not in the allowed set of subagent "reader"',
            );
            expect(lastTool(call)?.content).toContain("mcp_fs_read_text_file");
          },
          reply: { text: "ok" },
        },
      ]);
      const reader = harness.model("reader", []);
      const runtime = await setup(
        { "scripted:main": main, "scripted:reader": reader },
        { fs: filesystemServer(root), ev: everythingServer() },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("reader", "scripted:reader", { tools: [], mcp_servers: ["fs"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["reader"], { mcp_servers: [] }),
      );

      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      // Only the servers some agent needed were started.
      const status = Object.fromEntries(
        (await runtime.mcp.list({ connect: false })).map((s) => [s.name, s.status]),
      );
      expect(status).toEqual({ ev: "idle", fs: "connected" });
      harness.assertScriptsComplete();
    });

    it("gives the general-purpose subagent its parent's MCP servers", async () => {
      const main = harness.model("main", [
        { reply: { toolCalls: [taskCall("general-purpose", "echo hi")] } },
        {
          expect: (call) => expect(mcpNames(call.tools)).toContain("mcp_ev_echo"),
          reply: { toolCalls: [{ name: "mcp_ev_echo", args: { message: "hi" } }] },
        },
        {
          expect: (call) => expect(lastTool(call)?.content).toBe("Echo: hi"),
          reply: { text: "said hi" },
        },
        { reply: { text: "done" } },
      ]);
      const runtime = await setup(
        { "scripted:main": main },
        { fs: filesystemServer(root), ev: everythingServer() },
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["general-purpose"], {
          tools: [],
          mcp_servers: ["ev"],
        }),
      );

      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(mcpNames(main.calls[1]?.tools ?? []).every((n) => n.startsWith("mcp_ev_"))).toBe(true);
      harness.assertScriptsComplete();
    });
  });

  describe("server failures", () => {
    it("answers calls to a killed server with a tool error, then reconnects", async () => {
      const main = harness.model("main", [
        // A call that takes a while, so the kill most likely lands while it runs.
        {
          reply: {
            toolCalls: [
              { name: "mcp_ev_trigger-long-running-operation", args: { duration: 20, steps: 1 } },
            ],
          },
        },
        {
          expect: (call) => {
            expect(lastTool(call)?.status).toBe("error");
            expect(lastTool(call)?.content).toMatch(
              /^MCP server "ev" is unavailable: .+; it will be reconnected on the next call$/,
            );
          },
          reply: { toolCalls: [{ name: "mcp_ev_echo", args: { message: "back" } }] },
        },
        {
          expect: (call) => {
            expect(lastTool(call)?.status).toBe("success");
            expect(lastTool(call)?.content).toBe("Echo: back");
          },
          reply: { text: "recovered" },
        },
      ]);
      const runtime = await setup({ "scripted:main": main }, { ev: everythingServer() });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      await runtime.mcp.list();
      const pid = await serverPid(runtime, "ev");

      const running = runtime.run({ uid: "alice", agent: "boss", input: "go" });
      await until(() => main.calls[0]?.finishedAt !== undefined);
      await killServer(pid);
      const result = await running;

      expect(result.output).toBe("recovered");
      const newPid = await serverPid(runtime, "ev");
      expect(newPid).not.toBe(pid);
      expect(isAlive(newPid)).toBe(true);
      harness.assertScriptsComplete();
    });

    it("reports a server that died between calls once, then reconnects", async () => {
      const echo = (text: string) => ({ name: "mcp_ev_echo", args: { message: text } });
      const main = harness.model("main", [
        { reply: { toolCalls: [echo("one")] } },
        { reply: { text: "first" } },
        { reply: { toolCalls: [echo("two")] } },
        {
          expect: (call) =>
            expect(lastTool(call)?.content).toBe(
              'MCP server "ev" is unavailable: its process exited; it will be reconnected on the next call',
            ),
          reply: { toolCalls: [echo("three")] },
        },
        {
          expect: (call) => expect(lastTool(call)?.content).toBe("Echo: three"),
          reply: { text: "second" },
        },
      ]);
      const runtime = await setup({ "scripted:main": main }, { ev: everythingServer() });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      await killServer(await serverPid(runtime, "ev"));
      const down = await waitForStatus(runtime, "ev", "unavailable");
      expect(down.error).toBe("its process exited");
      // The tools stay known while the server is down.
      expect(down.tools).toContain("mcp_ev_echo");

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "again" });
      expect(result.output).toBe("second");
      harness.assertScriptsComplete();
    });

    it("leaves out a server that cannot start, with a warning, and lists why", async () => {
      const main = harness.model("main", [
        { expect: (call) => expect(mcpNames(call.tools)).toEqual([]), reply: { text: "fine" } },
      ]);
      const missing = join(root, "no-such-folder");
      const runtime = await setup({ "scripted:main": main }, { broken: filesystemServer(missing) });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("fine");
      expect(harness.fixture?.warnings.join("\n")).toMatch(
        /agent "boss": MCP server "broken" is unavailable \(.+\): its tools are left out/,
      );
      const [broken] = await runtime.mcp.list({ connect: false });
      expect(broken).toMatchObject({ status: "unavailable", tools: [] });
      // The server's own complaint (from its stderr) says what is wrong.
      expect(broken?.error).toContain(missing);
      harness.assertScriptsComplete();
    });
  });

  it("rebuilds graphs when a reconnected server offers other tools; names are sanitised", async () => {
    const toolsFile = join(root, "tools.json");
    const long = "x".repeat(70);
    writeFileSync(toolsFile, JSON.stringify(["alpha", "read.file", "read_file", long]));
    const main = harness.model("main", [
      { reply: { text: "first" } },
      {
        reply: { toolCalls: [{ name: "mcp_fx_beta", args: { text: "hello" } }] },
      },
      {
        expect: (call) => expect(lastTool(call)?.content).toBe("beta says hello"),
        reply: { text: "second" },
      },
    ]);
    const runtime = await setup({ "scripted:main": main }, { fx: fixtureServer(toolsFile) });
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", undefined, { tools: [] }),
    );

    await runtime.run({ uid: "alice", agent: "boss", input: "go" });
    const first = main.calls[0]?.tools ?? [];
    expect(first).toHaveLength(4);
    expect(first).toContain("mcp_fx_alpha");
    expect(first).toContain("mcp_fx_read_file");
    const hashed = first.filter((name) => /_[0-9a-f]{8}$/.test(name));
    expect(hashed).toHaveLength(2);
    for (const name of first) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);

    writeFileSync(toolsFile, JSON.stringify(["alpha", "beta"]));
    await killServer(await serverPid(runtime, "fx"));
    await waitForStatus(runtime, "fx", "unavailable");
    // An explicit list reconnects: the server now offers beta.
    const [fx] = await runtime.mcp.list();
    expect(fx).toMatchObject({ status: "connected", tools: ["mcp_fx_alpha", "mcp_fx_beta"] });

    await runtime.run({ uid: "alice", agent: "boss", input: "again" });
    expect(main.calls[1]?.tools).toEqual(["mcp_fx_alpha", "mcp_fx_beta"]);
    harness.assertScriptsComplete();
  });

  describe("configuration", () => {
    it("refuses an agent naming an undefined server, naming agent, server and defined ones", async () => {
      const main = harness.model("main", []);
      const runtime = await setup({ "scripted:main": main }, { fs: filesystemServer(root) });
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, { mcp_servers: ["fs", "github"] }),
      );

      const error = await runtime
        .run({ uid: "alice", agent: "boss", input: "go" })
        .catch((e: unknown) => e);

      expect(error).toMatchObject({
        code: ErrorCode.UnknownMcpServer,
        field: "context.mcp_servers",
      });
      expect((error as Error).message).toContain(
        'agent "boss" lists unknown MCP server(s) "github" in context.mcp_servers; defined servers: fs',
      );
      harness.assertScriptsComplete();
    });

    it("records a task call for a subagent naming an undefined server as failed", async () => {
      const message =
        'subagent "reader" could not start: agent "reader" lists unknown MCP server(s) "ghost" in context.mcp_servers; defined servers: fs (from the mcpServers option). Remove them from the agent or define them';
      const main = harness.model("main", [
        { reply: { toolCalls: [{ ...taskCall("reader", "read"), id: "c1" }] } },
        {
          expect: (call) => {
            expect(lastTool(call)?.status).toBe("error");
            expect(lastTool(call)?.content).toBe(message);
          },
          reply: { text: "the reader is misconfigured" },
        },
      ]);
      const reader = harness.model("reader", []);
      const runtime = await setup(
        { "scripted:main": main, "scripted:reader": reader },
        { fs: filesystemServer(root) },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("reader", "scripted:reader", { mcp_servers: ["ghost"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["reader"], { mcp_servers: [] }),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      expect(result.output).toBe("the reader is misconfigured");
      const { run } = expectOneRecordAndEventPair(events, result, "c1");
      expect(run).toMatchObject({ status: "failed", child_thread_id: "", error: message });
      harness.assertScriptsComplete();
    });

    it("records a task call for a subagent whose named server cannot start as failed", async () => {
      const missing = join(root, "no-such-folder");
      const main = harness.model("main", [
        { reply: { toolCalls: [{ ...taskCall("reader", "read"), id: "c1" }] } },
        { reply: { text: "the reader's server is down" } },
      ]);
      const reader = harness.model("reader", []);
      const runtime = await setup(
        { "scripted:main": main, "scripted:reader": reader },
        { broken: filesystemServer(missing) },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("reader", "scripted:reader", { mcp_servers: ["broken"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["reader"], { mcp_servers: [] }),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      expect(result.output).toBe("the reader's server is down");
      const { run, toolMessage } = expectOneRecordAndEventPair(events, result, "c1");
      expect(run).toMatchObject({ status: "failed", child_thread_id: "", rounds: 0 });
      // The subagent, the server, its own complaint (naming the missing folder) and the fix.
      expect(run.error).toMatch(
        /^subagent "reader" could not start: agent "reader" names MCP server\(s\) in context\.mcp_servers that cannot be reached: "broken" \(.+\), so it was not run without their tools\. Fix the server .+, or remove it from the agent's context\.mcp_servers$/,
      );
      expect(run.error).toContain(missing);
      expect(toolMessage.content).toBe(run.error);
      // Its model was never called: it did not run without the tools it is there for.
      expect(reader.calls).toHaveLength(0);
      harness.assertScriptsComplete();
    });

    it("with no servers defined, an agent's unset mcp_servers means no MCP tools", async () => {
      const main = harness.model("main", [
        { expect: (call) => expect(mcpNames(call.tools)).toEqual([]), reply: { text: "ok" } },
      ]);
      const runtime = await harness.setup({ "scripted:main": main });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      expect(await runtime.mcp.list()).toEqual([]);
      harness.assertScriptsComplete();
    });
  });

  it("leaves no server process behind after close()", async () => {
    const runtime = await setup({}, { fs: filesystemServer(root), ev: everythingServer() });
    const servers = await runtime.mcp.list();
    expect(servers.map((s) => s.status)).toEqual(["connected", "connected"]);
    const pids = servers.map((s) => s.pid ?? 0);
    for (const pid of pids) expect(isAlive(pid)).toBe(true);

    await harness.dispose();

    await until(() => pids.every((pid) => !isAlive(pid)));
    await expect(runtime.mcp.list()).rejects.toMatchObject({ code: ErrorCode.Closed });
  });

  it("stops a server still starting when the runtime closes", async () => {
    // A process that never answers the handshake; its marker argument finds it below.
    const marker = `mcp-hang-${Date.now()}`;
    const runtime = await setup(
      {},
      { slow: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)", marker] } },
    );
    const listing = runtime.mcp.list();
    await waitForStatus(runtime, "slow", "connecting");
    await untilAsync(async () => (await processesWith(marker)).length === 1);

    // Well before the 30 s connect timeout (the test's own timeout would fail it otherwise).
    await harness.dispose();

    expect((await listing)[0]).toMatchObject({ name: "slow", tools: [] });
    await untilAsync(async () => (await processesWith(marker)).length === 0);
  });
});
