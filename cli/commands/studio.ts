import { noMoreArguments } from "../command-line.js";
import type { StudioOptions } from "../studio.js";
import { declareCommand } from "./declaration.js";
import { DATA, HOST, PORT, portOf } from "./options.js";

/** `studio`: the LangGraph dev server for LangGraph Studio (`cli/studio.ts`). */
export const studio = declareCommand<{ name: "studio" } & StudioOptions>({
  name: "studio",
  forms: [
    {
      usage: "studio",
      about: [
        "Start the LangGraph dev server for LangGraph Studio (offline), on",
        "127.0.0.1:$STUDIO_PORT, else 2025; graphs read agents from the data dir.",
      ],
    },
  ],
  options: [DATA, PORT, HOST],
  examples: ["studio"],
  parse: ({ args, store, env, text }) => {
    noMoreArguments("studio", args);
    return {
      name: "studio",
      store,
      host: text(HOST) ?? "127.0.0.1",
      port: portOf(text(PORT) ?? (env.STUDIO_PORT?.trim() || "2025")),
    };
  },
  action: {
    needs: "nothing",
    run: async (command, io) => (await import("../studio.js")).studioCommand(command, io),
  },
});
