import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import {
  ERROR_CATEGORY,
  type ErrorCategory,
  ErrorCode,
  type ErrorDetails,
  SubagentGraphError,
} from "../errors.js";
import { isDatabaseUnavailable } from "../store/database-unavailable.js";
import { describeValidation } from "./validation-message.js";

/**
 * The HTTP status of each error code, by its category (`ERROR_CATEGORY` in `errors.ts`): the
 * caller's input 4xx, a conflict with the state 409, an upstream service 502–504, ours 5xx.
 */
const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.Validation]: 422,
  [ErrorCode.BackendMismatch]: 422,
  [ErrorCode.SubagentDefault]: 422,
  [ErrorCode.BackendImmutable]: 422,
  [ErrorCode.VersionConflict]: 409,
  [ErrorCode.SlugTaken]: 409,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.AgentIsSubagent]: 422,
  [ErrorCode.InvalidThreadId]: 422,
  [ErrorCode.Cancelled]: 409,
  [ErrorCode.ThreadBusy]: 409,
  [ErrorCode.AwaitingApproval]: 409,
  [ErrorCode.ModelUnavailable]: 422,
  [ErrorCode.UnknownTool]: 422,
  [ErrorCode.ScriptViolation]: 500,
  [ErrorCode.Closed]: 503,
  [ErrorCode.PathRefused]: 422,
  [ErrorCode.UnknownSkill]: 422,
  [ErrorCode.InvalidSkill]: 422,
  [ErrorCode.TooLarge]: 413,
  [ErrorCode.AgentInUse]: 409,
  [ErrorCode.AlreadyExists]: 409,
  [ErrorCode.Unsupported]: 422,
  [ErrorCode.Internal]: 500,
  [ErrorCode.UnknownMcpServer]: 422,
  // The model is an upstream service: it timed out (504) or misbehaved (502).
  [ErrorCode.ModelTimeout]: 504,
  [ErrorCode.ModelFailed]: 502,
  [ErrorCode.InvalidToolCalls]: 502,
  // A server the agent depends on is down: try again later.
  [ErrorCode.McpUnavailable]: 503,
  // The process's own data folder is unusable: a server fault, not the request's.
  [ErrorCode.DataDirUnusable]: 500,
  // The server's own checkpoints or console build: nothing the request can change.
  [ErrorCode.CheckpointIncompatible]: 500,
  [ErrorCode.ConsoleUnavailable]: 500,
  [ErrorCode.MalformedJson]: 400,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.UnknownKnowledgeBase]: 422,
  [ErrorCode.UnsupportedFileType]: 415,
  [ErrorCode.FileParseFailed]: 422,
  [ErrorCode.EmbeddingDimensionMismatch]: 422,
  [ErrorCode.EmbeddingFailed]: 502,
  [ErrorCode.RunSuperseded]: 409,
  // The store is down, not the request wrong: the client may send it again.
  [ErrorCode.DatabaseUnavailable]: 503,
};

/** The HTTP status an error with `code` is answered with. */
export function httpStatusOf(code: ErrorCode): number {
  return STATUS[code] ?? 500;
}

/**
 * The one error shape every endpoint answers with: `code` is always an {@link ErrorCode},
 * `category` whose fault it is, `details` the ids it is about when the error names some.
 */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    category: ErrorCategory;
    message: string;
    field?: string;
    details?: ErrorDetails;
  };
}

/** Sends `{ error: { code, category, message } }` with the status of `code`. */
export function sendCode(reply: FastifyReply, code: ErrorCode, message: string, field?: string) {
  return sendError(reply, STATUS[code], code, message, field);
}

/** Sends `{ error: { code, category, message, field?, details? } }` with `status`. */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: ErrorCode,
  message: string,
  field?: string,
  details?: ErrorDetails,
) {
  const body: ErrorBody = {
    error: {
      code,
      category: ERROR_CATEGORY[code] ?? "ours",
      message,
      ...(field ? { field } : {}),
      ...(details ? { details } : {}),
    },
  };
  return reply.status(status).type("application/json").send(body);
}

/**
 * The server's error handler: our typed errors by code, request validation as 422 naming the
 * first failing field, its value and the fix (`server/validation-message.ts`), malformed JSON as
 * 400, oversized bodies as 413; anything else is a 500 whose details go to the log only.
 */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (SubagentGraphError.isInstance(error)) {
    const status = httpStatusOf(error.code);
    if (error.category === "ours") request.log.error({ err: error }, "request failed");
    else if (status >= 500) request.log.warn({ err: error }, "request failed upstream");
    return sendError(reply, status, error.code, error.message, error.field, error.details);
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const { field, message } = describeValidation(
      error.validation,
      error.validationContext,
      request,
    );
    return sendError(reply, 422, ErrorCode.Validation, message, field);
  }
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return sendCode(
        reply,
        ErrorCode.MalformedJson,
        `malformed JSON in the request body: ${error.message}`,
      );
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return sendCode(reply, ErrorCode.TooLarge, `${error.message}: send a smaller body`);
    case "FST_ERR_BAD_URL":
      return sendCode(
        reply,
        ErrorCode.BadRequest,
        `${error.message}: percent-encode the path (e.g. %25 for a literal %)`,
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return sendCode(
        reply,
        ErrorCode.UnsupportedMediaType,
        `${error.message}: send application/json`,
      );
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return sendCode(
      reply,
      ErrorCode.MalformedJson,
      `malformed JSON in the request body: ${error.message}`,
    );
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    // Fastify's and its plugins' own refusals: their status and message, our code (their
    // `FST_…` codes name internals a client cannot branch on across versions).
    return sendError(reply, error.statusCode, ErrorCode.BadRequest, error.message);
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, "request failed: the database is unavailable");
    reply.header("retry-after", "1");
    return sendCode(
      reply,
      ErrorCode.DatabaseUnavailable,
      "the database is unavailable: send the request again shortly (GET /ready says when the store answers again)",
    );
  }
  request.log.error({ err: error }, "request failed");
  return sendError(reply, 500, ErrorCode.Internal, "internal error: see the server log");
}
