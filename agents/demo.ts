import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { AgentRecord } from "./schema.js";

/** The part of the agents API seeding needs (the runtime's `agents` has it). */
export interface SeedTarget {
  getDefault(uid: string): Promise<AgentRecord | undefined>;
  list(uid: string, options?: { include_subagents?: boolean }): Promise<AgentRecord[]>;
  create(uid: string, payload: unknown): Promise<AgentRecord>;
}

/** The user the CLI acts as when no `--uid` is given. */
export const DEMO_UID = "demo";

/** The slugs of the demo's subagents, in the order the main agent lists them. */
export const DEMO_SUBAGENTS = ["researcher", "reviewer"] as const;

/** The demo's gated tool call: the researcher's `write_file` pauses for a person's decision. */
export const DEMO_GATED_TOOL = { subagent: "researcher", tool: "write_file" } as const;

/**
 * The demo agents, subagents first: the main agent's allow-list names them, and creating them
 * first means the assistant can run the moment it exists. `context.model` is left out on purpose
 * so the process default applies (offline without a key, `openai:gpt-4o-mini` with one).
 */
const DEMO_AGENTS = [
  {
    slug: "researcher",
    name: "Researcher",
    description:
      "Gathers the facts, options and constraints a request depends on, and lists the open questions.",
    backend_id: "SubAgentBackend",
    config_json: {
      context: {
        system_prompt: [
          "You are a careful researcher who gathers facts for one self-contained part of a larger request.",
          "Report the relevant facts, options and constraints as short bullet points, saying how sure you are of each.",
          "Do not guess: when something is unknown or depends on a choice, put it under a final heading 'Open questions'.",
          "Your reader is another agent, so be concise and skip greetings.",
        ].join("\n"),
        // The demo's one gated tool: a researcher asked to save its notes waits for a person
        // to approve, edit or reject the write (README "Approvals").
        interrupt_on: {
          write_file: {
            allowed_decisions: ["approve", "edit", "reject"],
            description:
              "The researcher wants to write a file: approve, edit the path or text, or reject with a reason.",
          },
        },
      },
    },
  },
  {
    slug: "reviewer",
    name: "Reviewer",
    description:
      "Critiques a plan or draft for risks, gaps and weak assumptions, and suggests concrete fixes.",
    backend_id: "SubAgentBackend",
    config_json: {
      context: {
        system_prompt: [
          "You are a critical reviewer who checks a plan for risks and gaps before anyone acts on it.",
          "List the most important risks, missing steps and questionable assumptions first, each with a concrete fix.",
          "Mention what is already sound only briefly.",
          "Your reader is another agent, so be concise and skip greetings.",
        ].join("\n"),
      },
    },
  },
  {
    slug: "assistant",
    name: "Assistant",
    description: "A general assistant that delegates research and review to subagents.",
    backend_id: "ChatAgentBackend",
    is_default: true,
    config_json: {
      context: {
        subagents: [...DEMO_SUBAGENTS],
        system_prompt: [
          "You are a helpful assistant who plans the work, delegates it to subagents and writes the final answer.",
          "Split a request into independent parts and hand each part to the best-suited subagent with the `task` tool.",
          "Make all task calls for independent parts in the same turn so they run in parallel; give each a complete, self-contained description, since a subagent sees nothing else.",
          "Use the researcher to gather facts and open questions, and the reviewer to critique a plan for risks and gaps.",
          "When the results are back, synthesise them into one clear answer for the user instead of pasting the reports; mention open questions that remain.",
          "Answer simple questions directly without delegating.",
        ].join("\n"),
      },
    },
  },
] as const;

/**
 * Creates the demo agents for `uid` when the user has no default agent yet: the subagents
 * `researcher` and `reviewer` and the default chat agent `assistant`, which may call both.
 * The researcher's `write_file` waits for approval ({@link DEMO_GATED_TOOL}).
 *
 * Idempotent: a user with a default agent is left alone, and an agent whose slug the user
 * already owns is not created again (a seed interrupted half-way completes on the next call).
 *
 * @returns the agents it created, in creation order; empty when there was nothing to do.
 */
export async function seedDemo(
  target: { agents: SeedTarget },
  uid: string = DEMO_UID,
): Promise<AgentRecord[]> {
  const agents = target.agents;
  if (await agents.getDefault(uid)) return [];
  const owned = new Set(
    (await agents.list(uid, { include_subagents: true }))
      .filter((agent) => agent.owner_uid === uid)
      .map((agent) => agent.slug),
  );
  const created: AgentRecord[] = [];
  for (const payload of DEMO_AGENTS) {
    if (owned.has(payload.slug)) continue;
    try {
      created.push(await agents.create(uid, payload));
    } catch (error) {
      // Another process sharing the database seeded it at the same moment: nothing to do.
      if (!(SubagentGraphError.isInstance(error) && error.code === ErrorCode.SlugTaken))
        throw error;
    }
  }
  return created;
}
