import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { DATA, UID } from "./options.js";

type ThreadsCommand =
  | { name: "threads-list"; store: StoreOptions }
  | { name: "threads-show"; store: StoreOptions; threadId: string };

/** `threads list`, `threads show <id>`: the user's threads (`cli/threads.ts`). */
export const threads = declareCommand<ThreadsCommand>({
  name: "threads",
  forms: [
    {
      usage: "threads list",
      about: ["List your threads, most recently used first: id, agent, last use."],
    },
    {
      usage: "threads show <id>",
      about: [
        "Show one thread: its agent, last use, the requests for approval it",
        "waits on (id, the agent or subagent asking, tool, arguments), and its",
        "background tasks (id, subagent, status, task, result or what it waits for).",
      ],
    },
  ],
  options: [UID, DATA],
  notes: [
    'A thread that waits for approval is answered with "chat --thread <id>": the chat asks\neach pending request (approve, edit the arguments as JSON, or reject with a message)\nbefore anything else, on a terminal or from answers piped one per line.',
  ],
  examples: ["threads list", "threads show <id>"],
  parse: ({ args: [sub, ...more], store }) => {
    if (sub === "list") {
      noMoreArguments("threads list", more);
      return { name: "threads-list", store };
    }
    if (sub === "show") {
      const [threadId, ...extra] = more;
      if (threadId === undefined) {
        throw new UsageError('"threads show" needs a thread id (see "threads list")');
      }
      noMoreArguments("threads show <id>", extra);
      return { name: "threads-show", store, threadId };
    }
    throw subcommandError("threads", sub, "list or show <id>");
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { listThreads, showThread } = await import("../threads.js");
      return command.name === "threads-list"
        ? listThreads(runtime, io, command.store)
        : showThread(runtime, io, command.store, command.threadId);
    },
  },
});
