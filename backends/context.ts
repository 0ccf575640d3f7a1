import { z } from "zod";

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
  /** Which of the user's chat agents a hosted graph runs (LangGraph Studio's panel). */
  agent: z.string().min(1).optional().describe("agent slug or id (default: the user's default)"),
  /** Narrows the agent's subagent allow-list for this run (still only visible subagents). */
  subagents: z.array(z.string()).optional().describe("subagent slugs this run may call"),
  max_rounds: z.number().int().positive().optional().describe("model calls per subagent"),
  max_result_chars: z.number().int().positive().optional(),
  max_parallel_subagents: z.number().int().positive().optional(),
  subagent_timeout_ms: z.number().int().positive().optional(),
});
export type AgentContext = z.infer<typeof agentContextSchema>;

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
