import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Runtime } from "../runtime.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

/** `users add <uid> [--name <display name>]`. */
export async function addUser(
  runtime: Runtime,
  io: Io,
  uid: string,
  displayName: string | undefined,
): Promise<number> {
  const user = await runtime.users.add(uid, displayName === undefined ? {} : { displayName });
  say(io, `added user "${user.uid}"`);
  return 0;
}

/** `users list`: every user, by uid. */
export async function listUsers(runtime: Runtime, io: Io): Promise<number> {
  const users = await runtime.users.list();
  if (users.length === 0) {
    say(io, 'no users yet: add one with "users add <uid>"');
    return 0;
  }
  say(
    io,
    columns([
      ["UID", "NAME", "CREATED"],
      ...users.map((user) => [user.uid, user.displayName, user.createdAt]),
    ]),
  );
  return 0;
}

/** `tokens issue <uid> [--label <text>]`: prints the new token, the one time it is shown. */
export async function issueToken(
  runtime: Runtime,
  io: Io,
  uid: string,
  label: string | undefined,
): Promise<number> {
  const issued = await runtime.users.issueToken(uid, label === undefined ? {} : { label });
  say(io, `issued token ${issued.id} (label "${issued.label}") for user "${issued.uid}":`);
  say(io, "");
  say(io, issued.token);
  say(io, "");
  say(
    io,
    "This token cannot be shown again: store it now (if it is lost, revoke it and issue a new one).",
  );
  say(io, 'Send it to the HTTP server as "Authorization: Bearer <token>" or "x-api-key: <token>".');
  return 0;
}

/** `tokens list <uid>`: the user's tokens, revoked ones included; never the tokens. */
export async function listTokens(runtime: Runtime, io: Io, uid: string): Promise<number> {
  const tokens = await runtime.users.listTokens(uid);
  if (tokens.length === 0) {
    if ((await runtime.users.get(uid)) === undefined) throw userNotFound(uid);
    say(io, `user "${uid}" has no tokens: issue one with "tokens issue ${uid}"`);
    return 0;
  }
  say(
    io,
    columns([
      ["ID", "LABEL", "CREATED", "LAST USED", "REVOKED"],
      ...tokens.map((token) => [
        token.id,
        token.label,
        token.createdAt,
        token.lastUsedAt ?? "-",
        token.revokedAt ?? "-",
      ]),
    ]),
  );
  return 0;
}

/** `tokens revoke <uid> <token-id>`. */
export async function revokeToken(
  runtime: Runtime,
  io: Io,
  uid: string,
  tokenId: string,
): Promise<number> {
  if (!(await runtime.users.revokeToken(uid, tokenId))) {
    io.stderr.write(
      `error: token "${tokenId}" of user "${uid}" not found or already revoked (see "tokens list ${uid}")\n`,
    );
    return 1;
  }
  say(io, `revoked ${tokenId}`);
  return 0;
}

function userNotFound(uid: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `user "${uid}" not found: add the user first ("users add ${uid}")`,
    { field: "uid" },
  );
}
