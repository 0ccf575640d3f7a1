import type { FastifyReply, FastifyRequest } from "fastify";
import { ErrorCode } from "../errors.js";
import type { UsersApi } from "../runtime-types.js";
import { sendCode } from "./http-errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated user (set by the auth hook on every non-public route). */
    uid: string;
  }
}

/** Routes anyone may call: health, readiness, metrics, server info, the OpenAPI document. */
export const PUBLIC_PATHS = new Set(["/ok", "/ready", "/metrics", "/info", "/openapi.json"]);

/**
 * The token a request carries: `Authorization: Bearer <token>` (what web clients send) or
 * `x-api-key: <token>` (what `@langchain/langgraph-sdk` sends with `apiKey`).
 */
export function tokenOf(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return match[1];
  }
  const apiKey = request.headers["x-api-key"];
  return typeof apiKey === "string" && apiKey.trim() ? apiKey.trim() : undefined;
}

/**
 * An `onRequest` hook: 401 without a valid token, else `request.uid`. Tokens are never logged.
 * `isPublicPath` adds paths that need no token (the web console's files).
 */
export function authHook(
  users: Pick<UsersApi, "authenticate">,
  isPublicPath: (path: string) => boolean = () => false,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "";
    if (request.method === "OPTIONS" || PUBLIC_PATHS.has(path)) return;
    if ((request.method === "GET" || request.method === "HEAD") && isPublicPath(path)) return;
    const token = tokenOf(request);
    const uid = token ? await users.authenticate(token) : undefined;
    if (!uid) {
      return sendCode(
        reply,
        ErrorCode.Unauthorized,
        token
          ? "the token is unknown or revoked: issue a new one with `tokens issue <uid>`"
          : "no token: send Authorization: Bearer <token> or x-api-key: <token>",
      );
    }
    request.uid = uid;
  };
}
