import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions, type TextOption } from "./declaration.js";
import { DATA } from "./options.js";

const NAME: TextOption = {
  name: "name",
  type: "string",
  flag: "--name <text>",
  about: "users add: the user's display name (default: the uid).",
};

type UsersCommand =
  | { name: "users-add"; store: StoreOptions; uid: string; displayName: string | undefined }
  | { name: "users-list"; store: StoreOptions };

/** `users add <uid>`, `users list`: the users API tokens are issued to (`cli/users.ts`). */
export const users = declareCommand<UsersCommand>({
  name: "users",
  forms: [
    {
      usage: "users add <uid>",
      about: ["Add a user who can be given API tokens (--name: a display name)."],
    },
    { usage: "users list", about: ["List the users."] },
  ],
  options: [DATA, { option: NAME, only: ["add"] }],
  examples: ['users add alice --name "Alice Example"'],
  parse: ({ args: [sub, ...more], store, text }) => {
    if (sub === "list") {
      noMoreArguments("users list", more);
      return { name: "users-list", store };
    }
    if (sub !== "add") throw subcommandError("users", sub, "add <uid> or list");
    const [uid, ...extra] = more;
    if (uid === undefined) throw new UsageError('"users add <uid>" needs a user id');
    noMoreArguments("users add <uid>", extra);
    return { name: "users-add", store, uid, displayName: text(NAME) };
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { addUser, listUsers } = await import("../users.js");
      return command.name === "users-add"
        ? addUser(runtime, io, command.uid, command.displayName)
        : listUsers(runtime, io);
    },
  },
});
