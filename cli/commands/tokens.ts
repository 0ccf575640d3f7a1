import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions, type TextOption } from "./declaration.js";
import { DATA } from "./options.js";

const LABEL: TextOption = {
  name: "label",
  type: "string",
  flag: "--label <text>",
  about: 'tokens issue: what the token is for (default: "default").',
};

type TokensCommand =
  | { name: "tokens-issue"; store: StoreOptions; uid: string; label: string | undefined }
  | { name: "tokens-list"; store: StoreOptions; uid: string }
  | { name: "tokens-revoke"; store: StoreOptions; uid: string; tokenId: string };

/** Each subcommand's form, as its errors quote it. */
const SHAPES = {
  issue: "tokens issue <uid>",
  list: "tokens list <uid>",
  revoke: "tokens revoke <uid> <token-id>",
} as const;

/** `tokens issue | list | revoke`: a user's API tokens (`cli/users.ts`). */
export const tokens = declareCommand<TokensCommand>({
  name: "tokens",
  forms: [
    {
      usage: SHAPES.issue,
      about: [
        "Issue an API token for the HTTP server (--label: what it is for). The",
        "token is printed once and cannot be shown again.",
      ],
    },
    {
      usage: SHAPES.list,
      about: ["List a user's tokens (ids, labels, last use; never the tokens)."],
    },
    { usage: SHAPES.revoke, about: ['Revoke a token at once (its id is in "tokens list").'] },
  ],
  options: [DATA, { option: LABEL, only: ["issue"] }],
  examples: ["tokens issue alice --label laptop"],
  parse: ({ args: [sub, uid, ...more], store, text }) => {
    if (sub === undefined || !Object.hasOwn(SHAPES, sub)) {
      throw subcommandError("tokens", sub, "issue, list or revoke");
    }
    const shape = SHAPES[sub as keyof typeof SHAPES];
    // The user is a positional argument here: these commands manage a user, they do not act as one.
    if (uid === undefined) throw new UsageError(`"${shape}" needs a user id`);
    if (sub === "issue") {
      noMoreArguments(shape, more);
      return { name: "tokens-issue", store, uid, label: text(LABEL) };
    }
    if (sub === "list") {
      noMoreArguments(shape, more);
      return { name: "tokens-list", store, uid };
    }
    const [tokenId, ...extra] = more;
    if (tokenId === undefined) {
      throw new UsageError(`"${shape}" needs a token id (see "tokens list ${uid}")`);
    }
    noMoreArguments(shape, extra);
    return { name: "tokens-revoke", store, uid, tokenId };
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { issueToken, listTokens, revokeToken } = await import("../users.js");
      if (command.name === "tokens-issue") {
        return issueToken(runtime, io, command.uid, command.label);
      }
      return command.name === "tokens-list"
        ? listTokens(runtime, io, command.uid)
        : revokeToken(runtime, io, command.uid, command.tokenId);
    },
  },
});
