import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";

/**
 * MCP server names: short, lower-case, no `_` (the `_` after the name ends the server part of
 * an `mcp_<server>_<tool>` tool name, so names parse unambiguously).
 */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,30}$/;

const stringMap = (what: string) =>
  z.record(z.string(), z.string({ error: `use a string value for each ${what}` }), {
    error: `use an object of ${what} names to string values`,
  });

/** A server run as a local process, spoken to over its stdin/stdout. */
const stdioServerSchema = z.strictObject({
  command: z
    .string({ error: 'use the program to run, e.g. "node" or "npx"' })
    .min(1, { error: 'use the program to run, e.g. "node" or "npx"' }),
  args: z.array(z.string(), { error: "use a list of string arguments" }).default(() => []),
  /** Added to a minimal inherited environment (HOME, PATH, SHELL, TERM, USER, LOGNAME). */
  env: stringMap("environment variable").default(() => ({})),
  /** Working directory of the process; default: the runtime's. */
  cwd: z.string({ error: "use a folder path" }).min(1, { error: "use a folder path" }).optional(),
});

/** A remote server over Streamable HTTP. */
const httpServerSchema = z.strictObject({
  url: z.url({
    protocol: /^https?$/,
    error: 'use an http(s) URL, e.g. "http://127.0.0.1:3001/mcp"',
  }),
  /** Sent with every request (e.g. `Authorization`). */
  headers: stringMap("header").default(() => ({})),
});

/** A server definition as written (in `mcp.json` or the `mcpServers` option). */
export type McpServerConfig = z.input<typeof stdioServerSchema> | z.input<typeof httpServerSchema>;
export type McpStdioServer = z.output<typeof stdioServerSchema>;
export type McpHttpServer = z.output<typeof httpServerSchema>;
/** One server definition, as validated. */
export type McpServerDefinition = McpStdioServer | McpHttpServer;
/** Server definitions by name. */
export type McpServers = Record<string, McpServerDefinition>;

/** How the runtime talks to a server. */
export type McpTransportKind = "stdio" | "http";

export function transportOf(definition: McpServerDefinition): McpTransportKind {
  return "url" in definition ? "http" : "stdio";
}

const fileSchema = z.strictObject(
  {
    servers: z.record(z.string(), z.unknown(), {
      error: 'use an object of server definitions by name: { "<name>": { "command": … } }',
    }),
  },
  { error: 'use an object { "servers": { "<name>": { … } } }' },
);

const STDIO_FIELDS = "command, args, env, cwd (a local process)";
const HTTP_FIELDS = "url, headers (a remote server)";

/**
 * Validates MCP server definitions: `{ "servers": { "<name>": { command, args?, env?, cwd? } |
 * { url, headers? } } }`. Every problem is reported at once, each naming the server and the field.
 *
 * @param source where the value came from, for the message (a file path, "the mcpServers option").
 * @throws SubagentGraphError `VALIDATION_FAILED`, `field` = the first bad field's dotted path.
 */
export function parseMcpConfig(value: unknown, source: string): McpServers {
  const file = fileSchema.safeParse(value);
  if (!file.success) {
    const issue = file.error.issues[0];
    const field = issue?.path.length ? issue.path.join(".") : "servers";
    throw invalid(source, [`${field}: ${issue?.message ?? "invalid"}`], field);
  }
  const problems: { field: string; text: string }[] = [];
  const servers: McpServers = {};
  for (const [name, raw] of Object.entries(file.data.servers)) {
    const where = `server "${name}"`;
    if (!MCP_SERVER_NAME_PATTERN.test(name)) {
      problems.push({
        field: `servers.${name}`,
        text: `${where}: the name is invalid: use 1-31 lower-case letters, digits or "-", starting with a letter or digit (no "_": it separates the server from the tool in mcp_<server>_<tool>)`,
      });
      continue;
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      problems.push({
        field: `servers.${name}`,
        text: `${where}: use an object with either command (a local process) or url (a remote server)`,
      });
      continue;
    }
    const hasCommand = "command" in raw;
    const hasUrl = "url" in raw;
    if (hasCommand === hasUrl) {
      problems.push({
        field: `servers.${name}`,
        text: hasCommand
          ? `${where}: has both command and url: give command (a local process) or url (a remote server), not both`
          : `${where}: has neither command nor url: give command (a local process) or url (a remote server)`,
      });
      continue;
    }
    const schema = hasUrl ? httpServerSchema : stdioServerSchema;
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      servers[name] = parsed.data;
      continue;
    }
    for (const issue of parsed.error.issues) {
      const field = ["servers", name, ...issue.path.map(String)].join(".");
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          problems.push({
            field: `servers.${name}.${key}`,
            text: `${where}: unknown field "${key}": a server has ${hasUrl ? HTTP_FIELDS : STDIO_FIELDS}`,
          });
        }
        continue;
      }
      const fieldName = issue.path.map(String).join(".") || "(server)";
      problems.push({ field, text: `${where}: field "${fieldName}": ${issue.message}` });
    }
  }
  if (problems.length > 0) {
    throw invalid(
      source,
      problems.map((problem) => problem.text),
      problems[0]?.field ?? "servers",
    );
  }
  return servers;
}

function invalid(source: string, problems: string[], field: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `invalid MCP server config in ${source}: ${problems.join("; ")}`,
    { field },
  );
}

/** Where {@link loadMcpServers} looks, in order of precedence. */
export interface McpConfigSources {
  /** Server definitions by name passed in code (`createRuntime({ mcpServers })`): win over files. */
  option?: unknown;
  /** `SUBAGENT_GRAPH_MCP`: a JSON file that must exist when set. */
  env: NodeJS.ProcessEnv;
  /** `<dataDir>/mcp.json` is read when present. */
  dataDir: string;
}

/** Environment variable naming the MCP config file. */
export const MCP_CONFIG_ENV = "SUBAGENT_GRAPH_MCP";

/**
 * The MCP servers of a runtime: the `mcpServers` option when given (the server map, as under
 * `servers` in the file), else the file `SUBAGENT_GRAPH_MCP` names, else `<dataDir>/mcp.json` when
 * it exists, else none. Read once, when the runtime is created.
 */
export function loadMcpServers(sources: McpConfigSources): McpServers {
  if (sources.option !== undefined) {
    return parseMcpConfig({ servers: sources.option }, "the mcpServers option");
  }
  const fromEnv = sources.env[MCP_CONFIG_ENV]?.trim();
  const file = fromEnv || join(sources.dataDir, "mcp.json");
  if (!fromEnv && !existsSync(file)) return {};
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `cannot read the MCP server config ${file} (${MCP_CONFIG_ENV}): ${messageOf(error)}; point ${MCP_CONFIG_ENV} at an existing JSON file or unset it`,
      { field: MCP_CONFIG_ENV, cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `invalid MCP server config in ${file}: not JSON (${messageOf(error)})`,
      { field: "servers", cause: error },
    );
  }
  return parseMcpConfig(json, file);
}
