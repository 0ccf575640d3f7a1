import { z } from "zod";

/**
 * The runtime context of a main agent's run (LangGraph `context`, not persisted). Set by the
 * runtime from the authenticated caller; `file_thread_id` defaults to `thread_id`.
 */
export const agentContextSchema = z.object({
  uid: z.string().min(1),
  thread_id: z.string().min(1),
  file_thread_id: z.string().min(1).optional(),
  skills_thread_id: z.string().min(1).optional(),
  is_subagent_runtime: z.boolean().default(false),
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
