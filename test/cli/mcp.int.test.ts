import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../../cli/command-line.js";
import { parseCommandLine } from "../../cli/parse.js";
import { cli } from "../support/cli.js";
import { everythingServer, filesystemServer, processesWith } from "../support/mcp-servers.js";

describe("mcp command line", () => {
  it("parses mcp list and refuses anything else", () => {
    expect(parseCommandLine(["mcp", "list", "--data", "d"], {})).toMatchObject({
      name: "mcp-list",
      store: { dataDir: "d" },
    });
    expect(() => parseCommandLine(["mcp"], {})).toThrow(UsageError);
    expect(() => parseCommandLine(["mcp", "add"], {})).toThrow('unknown subcommand "mcp add"');
    expect(() => parseCommandLine(["mcp", "list", "x"], {})).toThrow("takes no further arguments");
  });
});

describe("cli/main.ts mcp list", { timeout: 60_000 }, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cli-mcp-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("says how to define servers when there are none", async () => {
    const listed = await cli(["mcp", "list", "--data", dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("no MCP servers defined: add <data>/mcp.json");
  });

  it("lists servers with status and tools, reports the broken one, leaves no process", async () => {
    await writeFile(
      join(dataDir, "mcp.json"),
      JSON.stringify({
        servers: {
          // The data dir is a unique argument: it finds the server's process below.
          fs: filesystemServer(dataDir),
          ev: everythingServer(),
          broken: { command: join(dataDir, "no-such-program") },
        },
      }),
    );

    const listed = await cli(["mcp", "list", "--data", dataDir]);

    expect(listed.code).toBe(1);
    expect(listed.stdout).toMatch(/^NAME\s+TRANSPORT\s+STATUS\s+TOOLS$/m);
    expect(listed.stdout).toMatch(/^broken\s+stdio\s+unavailable\s+-$/m);
    expect(listed.stdout).toMatch(/^ev\s+stdio\s+connected\s+mcp_ev_echo, /m);
    expect(listed.stdout).toMatch(/^fs\s+stdio\s+connected\s+.*mcp_fs_read_text_file/m);
    expect(listed.stderr).toContain(
      `error: MCP server "broken" is unavailable: spawn ${join(dataDir, "no-such-program")} ENOENT`,
    );
    // The CLI closed its runtime: the filesystem server it started is gone with it.
    expect(await processesWith(dataDir)).toEqual([]);
  });

  it("refuses an invalid mcp.json, naming the server and the field", async () => {
    await writeFile(
      join(dataDir, "mcp.json"),
      JSON.stringify({ servers: { fs: { command: "node", url: "http://127.0.0.1:9/mcp" } } }),
    );
    const listed = await cli(["mcp", "list", "--data", dataDir]);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain("error [VALIDATION_FAILED]: invalid MCP server config in");
    expect(listed.stderr).toContain('server "fs": has both command and url');
  });
});
