import { noMoreArguments } from "../command-line.js";
import { declareCommand } from "./declaration.js";

/**
 * `help [command]`: the general usage, or one command's help (`cli/help.ts` writes both from
 * the declarations). `<command> --help` comes here too (`cli/parse.ts`).
 */
export const help = declareCommand<{ name: "help"; topic: string | undefined }>({
  name: "help",
  forms: [
    {
      usage: "help [command]",
      about: ["Show this text, or one command's (also: <command> --help)."],
    },
  ],
  options: [],
  examples: ["help chat"],
  parse: ({ args: [topic, ...extra] }) => {
    noMoreArguments("help [command]", extra);
    return { name: "help", topic };
  },
  action: {
    needs: "nothing",
    run: async (command, io, texts) => {
      io.stdout.write(`${command.topic === undefined ? texts.usage : texts.of(command.topic)}\n`);
      return 0;
    },
  },
});
