import { noMoreArguments } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { DATA, UID } from "./options.js";

/** `demo`: the demo agents and a sample question (`cli/demo.ts`). */
export const demo = declareCommand<{ name: "demo"; store: StoreOptions }>({
  name: "demo",
  forms: [
    {
      usage: "demo",
      about: ["Create the demo agents if needed and run a sample question."],
    },
  ],
  options: [UID, DATA],
  examples: ["demo"],
  parse: ({ args, store }) => {
    noMoreArguments("demo", args);
    return { name: "demo", store };
  },
  action: {
    needs: "runtime",
    run: async (context, command) =>
      (await import("../demo.js")).demoCommand(context, command.store),
  },
});
