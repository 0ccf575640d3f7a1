import { z } from "zod";
import { DEMO_UID } from "../agents/demo.js";

const LIMIT_FIX = "use a positive whole number, or leave it out for the agent's own setting";

/** A limit a run's context may set over the agents' own (see `middleware/parent-scope.ts`). */
function limitField(description: string) {
  return z
    .number({ error: LIMIT_FIX })
    .int({ error: LIMIT_FIX })
    .positive({ error: LIMIT_FIX })
    .optional()
    .describe(description);
}

/**
 * The fields a run's context shares with Studio's configuration panel: which agent runs, which of
 * its subagents it may call, and the limits of this run. Described once here, so the library's
 * schema and the panel's say the same.
 */
const runChoiceFields = {
  /** Which of the user's chat agents a hosted graph runs (LangGraph Studio's panel). */
  agent: z
    .string({ error: "use the slug or id of one of the user's chat agents" })
    .min(1, { error: "use the slug or id of one of the user's chat agents" })
    .optional()
    .describe("slug or id of the chat agent to run; unset: the user's default agent"),
  /** Narrows the agent's subagent allow-list for this run (still only visible subagents). */
  subagents: z
    .array(z.string({ error: "use a list of subagent slugs" }), {
      error: "use a list of subagent slugs",
    })
    .optional()
    .describe(
      "subagent slugs this run may call, among the agent's own; unset: all of the agent's subagents",
    ),
  max_rounds: limitField(
    "model calls a subagent may make per task; unset: the subagent's own max_rounds, else the server's (built in: 10)",
  ),
  max_result_chars: limitField(
    "characters of a subagent's answer passed back to the agent; unset: the agent's own, else the server's (built in: 8000)",
  ),
  max_parallel_subagents: limitField(
    "task calls one model turn may make; unset: the agent's own, else the server's (built in: 3)",
  ),
  subagent_timeout_ms: limitField(
    "time limit of one subagent task, in ms; unset: the agent's own, else the server's (built in: none)",
  ),
};

/**
 * The runtime context of a main agent's run (LangGraph `context`, not persisted). Set by the
 * runtime from the authenticated caller; `file_thread_id` defaults to `thread_id`.
 */
export const agentContextSchema = z.object({
  uid: z.string().min(1).describe("the acting user: only their agents and threads are reachable"),
  thread_id: z
    .string()
    .min(1)
    .optional()
    .describe("the run's thread (default: the config's thread_id, which hosts set)"),
  file_thread_id: z.string().min(1).optional(),
  skills_thread_id: z.string().min(1).optional(),
  is_subagent_runtime: z.boolean().default(false),
  ...runChoiceFields,
});
export type AgentContext = z.infer<typeof agentContextSchema>;

/**
 * The context of a main agent's graph served by a LangGraph server (`langgraph.json`, Studio):
 * what Studio's configuration panel edits. Every field may be left out: `uid` defaults to the
 * demo user (whose agents are created on first use), `agent` to the user's default agent, the
 * rest to the agents' own settings. The thread comes from the server's `configurable.thread_id`;
 * the runtime's internal fields (file and skills scopes) are not settable here.
 */
export const hostedAgentContextSchema = z.object(
  {
    uid: z
      .string({ error: "use a user id (a non-empty string)" })
      .min(1, { error: "use a user id (a non-empty string)" })
      .default(DEMO_UID)
      .describe(
        `the acting user: the run sees only their agents and files (default: "${DEMO_UID}", whose demo agents exist from the start)`,
      ),
    ...runChoiceFields,
  },
  { error: 'use an object such as { "uid": "demo", "agent": "assistant" }, or leave it out' },
);
export type HostedAgentContext = z.output<typeof hostedAgentContextSchema>;

/**
 * The runtime context of a subagent's run, made by the task middleware: the child's own
 * checkpoint thread and skills scope, the parent's file scope (uploads/outputs), and the bounds
 * of this call (read at dispatch, so one compiled subagent graph serves every call).
 */
export const subAgentContextSchema = z.object({
  uid: z.string().min(1),
  thread_id: z.string().min(1),
  parent_thread_id: z.string().min(1),
  file_thread_id: z.string().min(1),
  skills_thread_id: z.string().min(1),
  is_subagent_runtime: z.literal(true),
  /** Tools the child may see and run for this call (its allowed set, maybe narrowed). */
  allowed_tools: z.array(z.string()),
  /** Model calls the child may make. */
  max_rounds: z.number().int().positive(),
  /** The task's description, for prompts rendered per call (the general-purpose subagent). */
  intent: z.string().optional(),
});
export type SubAgentContext = z.infer<typeof subAgentContextSchema>;
