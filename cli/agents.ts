import { type InterruptOn, resolveGates } from "../agents/interrupt-on.js";
import type { AgentRecord } from "../agents/schema.js";
import { defaultModelSpec } from "../models/factory.js";
import type { Runtime } from "../runtime.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

/** The `agents list` command: every agent the user may see, subagents included. */
export async function listAgents(runtime: Runtime, io: Io, store: StoreOptions): Promise<number> {
  const agents = await runtime.agents.list(store.uid, { include_subagents: true });
  if (agents.length === 0) {
    say(
      io,
      `user "${store.uid}" has no agents yet: run "subagent-graph demo" (npm run demo in a clone) to create the demo agents.`,
    );
    return 0;
  }
  const rows = agents.map((agent) => [
    kindOf(agent),
    agent.is_default ? `${agent.slug} *` : agent.slug,
    modelOf(agent, io.env),
    agent.is_subagent ? "" : (agent.config_json.context.subagents ?? []).join(", ") || "-",
    agent.owner_uid === store.uid ? agent.name : `${agent.name} (shared by ${agent.owner_uid})`,
  ]);
  say(io, columns([["KIND", "SLUG", "MODEL", "SUBAGENTS", "NAME"], ...rows]));
  say(io, "* default agent");
  return 0;
}

/** The `agents show <slug>` command: one agent's settings. */
export async function showAgent(
  runtime: Runtime,
  io: Io,
  store: StoreOptions,
  slug: string,
): Promise<number> {
  const agent = await runtime.agents.get(store.uid, slug);
  const context = agent.config_json.context;
  const listOrDefault = (list: string[] | undefined, fallback: string) =>
    list === undefined ? fallback : list.join(", ") || "none";
  const fields: [string, string][] = [
    ["kind", `${kindOf(agent)} (${agent.backend_id})`],
    ["id", agent.id],
    ["owner", agent.owner_uid],
    ["default", agent.is_default ? "yes" : "no"],
    ["model", modelOf(agent, io.env)],
    ["subagents", agent.is_subagent ? "-" : listOrDefault(context.subagents, "none")],
    ["tools", listOrDefault(context.tools, "all available")],
    ["mcp servers", listOrDefault(context.mcp_servers, "all defined")],
    ["skills", listOrDefault(context.skills, "all installed")],
    ["approvals", approvalsOf(context.interrupt_on)],
    ["sharing", sharingOf(agent)],
    ["version", `${agent.version} (updated ${agent.updated_at})`],
    ["description", agent.description || "-"],
  ];
  say(io, `${agent.slug}: ${agent.name}`);
  say(io, columns(fields.map(([name, value]) => [`  ${name}`, value])));
  say(io, "  system prompt:");
  const prompt = context.system_prompt?.trim() || "(none)";
  say(io, prompt.replace(/^/gm, "    "));
  return 0;
}

/** "write_file (approve, edit, reject), task (approve)", or "none": the tools that wait for a person. */
function approvalsOf(interruptOn: InterruptOn | undefined): string {
  const gates = [...resolveGates(interruptOn)];
  if (gates.length === 0) return "none";
  return gates.map(([tool, gate]) => `${tool} (${gate.allowedDecisions.join(", ")})`).join(", ");
}

function kindOf(agent: AgentRecord): string {
  return agent.is_subagent ? "subagent" : "chat";
}

/** The agent's own model, or the process default it falls back to. */
function modelOf(agent: AgentRecord, env: NodeJS.ProcessEnv): string {
  return agent.config_json.context.model ?? `${defaultModelSpec(env)} (default)`;
}

function sharingOf(agent: AgentRecord): string {
  const { mode, uids, editors } = agent.share_config;
  const parts: string[] = [mode === "users" ? `users: ${uids.join(", ") || "none"}` : mode];
  if (editors.length > 0) parts.push(`editors: ${editors.join(", ")}`);
  return parts.join("; ");
}
