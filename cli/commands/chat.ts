import type { ChatCommand } from "../chat.js";
import { CHAT_COMMANDS_HELP } from "../chat-commands.js";
import { declareCommand, type TextOption } from "./declaration.js";
import { AGENT, DATA, UID } from "./options.js";

const THREAD: TextOption = {
  name: "thread",
  type: "string",
  flag: "--thread <id>",
  about: "chat: continue this thread (its id is printed after each answer).",
};

const MODELS_NOTE = `Models: agents without a model use OPENAI_API_KEY (openai:gpt-4o-mini), or OPENAI_BASE_URL for
a local OpenAI-compatible server, or SUBAGENT_GRAPH_MODEL; with none of them set, a
deterministic offline model answers, labelled [offline model].`;

/** `chat`: one question, or the interactive chat (`cli/chat.ts`). */
export const chat = declareCommand<ChatCommand>({
  name: "chat",
  forms: [
    {
      usage: "chat [question]",
      about: [
        "Ask your default agent (or --agent) one question and print the answer.",
        "Without a question: an interactive chat on a terminal, or the whole of",
        "stdin as the question when it is piped.",
      ],
    },
  ],
  options: [UID, DATA, AGENT, THREAD],
  notes: [
    'Only the demo user is created implicitly (with its agents); another --uid must have been\nadded with "users add" first. --thread takes a thread of yours ("threads list" lists them)\nand goes on with its agent unless --agent names another.',
    'When a run pauses for approval (an agent\'s interrupt_on), each pending request is shown\n(who asks, the tool, its arguments, the decisions allowed) and asked: approve, edit (new\narguments as one line of JSON) or reject (with an optional message for the model). Piped\nstdin gives the answers one per line. Without answers (the question was piped, or the\ninput ended) the thread stays paused and chat exits with 3; "chat --thread <id>" asks\nagain, and "threads show <id>" lists what waits.',
    'An agent with async_subagents may start background tasks, which go on after its answer.\nWhile the chat is open, one "[background]" line tells each task of its thread that ends\n(completed with the start of its result, or failed, cancelled, timed out with why);\n"threads show <id>" lists them all.',
  ],
  sharedNotes: [CHAT_COMMANDS_HELP, MODELS_NOTE],
  examples: [
    'chat "Compare solar and wind power for a small farm"',
    'chat --thread <id> "And what about hydro?"',
  ],
  parse: ({ args, store, text }) => ({
    name: "chat",
    store,
    agent: text(AGENT),
    threadId: text(THREAD),
    question: args.length > 0 ? args.join(" ") : undefined,
  }),
  action: {
    needs: "runtime",
    run: async (context, command) => (await import("../chat.js")).chatCommand(context, command),
  },
});
