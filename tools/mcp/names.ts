import { createHash } from "node:crypto";
import { ErrorCode, SubagentGraphError } from "../../errors.js";

/** Longest tool name most model APIs accept (OpenAI's function names: `^[a-zA-Z0-9_-]{1,64}$`). */
export const MCP_TOOL_NAME_MAX = 64;
/** Prefix of every MCP tool name: `mcp_<server>_<tool>`. */
export const MCP_TOOL_PREFIX = "mcp_";

const HASH_CHARS = 8;

/**
 * The names MCP tools of `server` are exposed under, by the server's own tool name:
 * `mcp_<server>_<tool>` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, at most
 * {@link MCP_TOOL_NAME_MAX} characters.
 *
 * A tool keeps that plain name when it is unique. A name that had to be cut, that two tools
 * share after sanitising, or that is `reserved` (a registered tool's name) gets a suffix
 * `_<8 hex>` hashed from the server and the tool's own name instead: stable across reconnects
 * and independent of the order the server lists its tools in. A tool whose name needed no
 * change wins over a sanitised one that collides with it (only the latter gets the suffix).
 */
export function mcpToolNames(
  server: string,
  tools: readonly string[],
  reserved: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const unique = [...new Set(tools)];
  const plain = (tool: string) => `${MCP_TOOL_PREFIX}${server}_${tool}`;
  const sanitised = (tool: string) => plain(tool).replace(/[^a-zA-Z0-9_-]/g, "_");
  const names = new Map<string, string>();
  const taken = new Set(reserved);

  // Tools whose plain name is already valid keep it (plain names of one server never collide).
  for (const tool of unique) {
    const name = plain(tool);
    if (name === sanitised(tool) && name.length <= MCP_TOOL_NAME_MAX && !reserved.has(name)) {
      names.set(tool, name);
      taken.add(name);
    }
  }
  const rest = unique.filter((tool) => !names.has(tool));
  const shared = new Map<string, number>();
  for (const tool of rest) shared.set(sanitised(tool), (shared.get(sanitised(tool)) ?? 0) + 1);
  for (const tool of rest) {
    const name = sanitised(tool);
    if (name.length <= MCP_TOOL_NAME_MAX && !taken.has(name) && shared.get(name) === 1) {
      names.set(tool, name);
      taken.add(name);
      continue;
    }
    const hashed = hashedName(server, tool, name, taken);
    names.set(tool, hashed);
    taken.add(hashed);
  }
  return names;
}

function hashedName(server: string, tool: string, base: string, taken: ReadonlySet<string>) {
  const digest = createHash("sha256").update(`${server}\0${tool}`).digest("hex");
  // Longer suffixes only if 8 hex digits ever collide with a name already given out.
  for (let length = HASH_CHARS; length <= digest.length; length += 4) {
    const suffix = `_${digest.slice(0, length)}`;
    const name = `${base.slice(0, MCP_TOOL_NAME_MAX - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
  throw new SubagentGraphError(
    ErrorCode.Internal,
    `no free name for MCP tool "${tool}" of server "${server}"`,
  );
}
