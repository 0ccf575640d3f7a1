import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { DATA, UID } from "./options.js";

type AgentsCommand =
  | { name: "agents-list"; store: StoreOptions }
  | { name: "agents-show"; store: StoreOptions; slug: string };

/** `agents list`, `agents show <slug>`: the user's agents (`cli/agents.ts`). */
export const agents = declareCommand<AgentsCommand>({
  name: "agents",
  forms: [
    {
      usage: "agents list",
      about: ["List your agents: kind (chat/subagent), slug, model, subagents."],
    },
    { usage: "agents show <slug>", about: ["Show one agent's settings."] },
  ],
  options: [UID, DATA],
  examples: ["agents list", "agents show assistant"],
  parse: ({ args: [sub, ...more], store }) => {
    if (sub === "list") {
      noMoreArguments("agents list", more);
      return { name: "agents-list", store };
    }
    if (sub === "show") {
      const [slug, ...extra] = more;
      if (slug === undefined) throw new UsageError('"agents show" needs the slug of an agent');
      noMoreArguments("agents show <slug>", extra);
      return { name: "agents-show", store, slug };
    }
    throw subcommandError("agents", sub, "list or show <slug>");
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { listAgents, showAgent } = await import("../agents.js");
      return command.name === "agents-list"
        ? listAgents(runtime, io, command.store)
        : showAgent(runtime, io, command.store, command.slug);
    },
  },
});
