import { z } from "zod";
import { DEMO_UID } from "../agents/demo.js";
import { runChoiceFields } from "../run-context.js";

/**
 * The context of a main agent's graph served by a LangGraph server (`langgraph.json`, Studio):
 * what Studio's configuration panel edits. Every field may be left out: `uid` defaults to the
 * demo user (whose agents are created on first use), `agent` to the user's default agent, the
 * rest to the agents' own settings. The thread comes from the server's `configurable.thread_id`;
 * the runtime's internal fields (file and skills scopes) are not settable here. The library's
 * run contexts (main agent, subagent) are in `run-context.ts`.
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
