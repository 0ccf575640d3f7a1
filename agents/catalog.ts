import { defaultModelSpec, OFFLINE_MODEL } from "../models/factory.js";
import type { SkillSummary } from "../sandbox/skills/library.js";
import type { McpManager } from "../tools/mcp/manager.js";
import type { ToolRegistry } from "../tools/registry.js";

/** What agents can be configured with, for forms and clients (`GET /api/catalog`). */
export interface Catalog {
  /** Model specs an agent's `context.model` can name without a custom one (`openai:<name>` too). */
  models: string[];
  /** The spec used when an agent sets no model. */
  defaultModel: string;
  /** Registered tools (`context.tools`). */
  tools: { name: string; description: string }[];
  /** Installed skills (`context.skills`). */
  skills: { name: string; description: string }[];
  /** Defined MCP servers (`context.mcp_servers`), not connected for this. */
  mcpServers: string[];
}

/** Where a catalog is read from. */
export interface CatalogSources {
  env: NodeJS.ProcessEnv;
  /** Specs of the custom models the runtime was given. */
  customModels: readonly string[];
  tools: ToolRegistry;
  skills(): Promise<SkillSummary[]>;
  mcp: McpManager;
}

/** The models, tools, skills and MCP servers an agent's config may name, as of now. */
export async function readCatalog(sources: CatalogSources): Promise<Catalog> {
  const defaultModel = defaultModelSpec(sources.env);
  return {
    models: [...new Set([defaultModel, OFFLINE_MODEL, ...sources.customModels])],
    defaultModel,
    tools: sources.tools.describe(),
    skills: (await sources.skills()).map(({ name, description }) => ({ name, description })),
    mcpServers: (await sources.mcp.list({ connect: false })).map((server) => server.name),
  };
}
