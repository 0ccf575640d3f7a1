/**
 * `config_json.context.interrupt_on`: which of an agent's tool calls wait for a person's
 * decision before they run. The semantics are langchain's `humanInTheLoopMiddleware`
 * (`true` = every decision, `false` = never pause, an object = these decisions); the keys are
 * snake_case like the rest of the stored config. README "Approvals".
 */

import { z } from "zod";

/** What a person may answer a paused tool call with. */
export const DECISION_TYPES = ["approve", "edit", "reject"] as const;
export type DecisionType = (typeof DECISION_TYPES)[number];

const DECISIONS_FIX = `use a non-empty list of ${DECISION_TYPES.map((type) => `"${type}"`).join(", ")}`;
const ENTRY_FIX =
  'use true, false, or { "allowed_decisions": ["approve", "edit", "reject"], "description": "…" }';

/** One tool's gate as stored. */
export const interruptOnEntrySchema = z.union(
  [
    z.boolean(),
    z.strictObject(
      {
        allowed_decisions: z
          .array(z.enum(DECISION_TYPES, { error: DECISIONS_FIX }), { error: DECISIONS_FIX })
          .min(1, { error: DECISIONS_FIX })
          .refine((types) => new Set(types).size === types.length, {
            error: `${DECISIONS_FIX}, each at most once`,
          }),
        description: z.string({ error: "use a string shown to the person deciding" }).optional(),
      },
      { error: ENTRY_FIX },
    ),
  ],
  { error: ENTRY_FIX },
);
export type InterruptOnEntry = z.output<typeof interruptOnEntrySchema>;

/** The whole map: tool name → gate. */
export const interruptOnSchema = z.record(
  z.string().min(1, { error: "use a tool name as the key" }),
  interruptOnEntrySchema,
  { error: 'use an object mapping tool names to gates, e.g. { "write_file": true }' },
);
export type InterruptOn = z.output<typeof interruptOnSchema>;

/** A tool's resolved gate: the decisions allowed, and the text shown with the request. */
export interface ToolGate {
  allowedDecisions: DecisionType[];
  description?: string;
}

/**
 * The tools `interruptOn` gates, each with its decisions (`true` = all three); `false` entries
 * and an unset map gate nothing.
 */
export function resolveGates(interruptOn: InterruptOn | undefined): Map<string, ToolGate> {
  const gates = new Map<string, ToolGate>();
  for (const [name, entry] of Object.entries(interruptOn ?? {})) {
    if (entry === false) continue;
    if (entry === true) gates.set(name, { allowedDecisions: [...DECISION_TYPES] });
    else {
      gates.set(name, {
        allowedDecisions: [...entry.allowed_decisions],
        ...(entry.description === undefined ? {} : { description: entry.description }),
      });
    }
  }
  return gates;
}
