/**
 * A local, OpenAI-compatible Chat Completions server for end-to-end tests.
 *
 * Tests point the real `ChatOpenAI` client (and the `openai` SDK underneath it) at this
 * server, so the request serialisation, SSE parsing, tool-call chunk merging and error
 * mapping that run in production are exercised too — a mocked model would skip all of that.
 * Every reply comes from a test-supplied {@link FakeHandler}; anything the test did not
 * anticipate is collected in {@link FakeOpenAIServer.failures} so it can be asserted empty.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { hashedEmbedding } from "./hashed-embedding.js";

/** The JSON body of a `POST /v1/chat/completions` request, as the client sent it. */
export interface ChatCompletionRequestBody {
  model: string;
  messages: Array<Record<string, unknown>>;
  tools?: Array<{
    type: "function";
    function: { name: string; description?: string; parameters?: unknown };
  }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [k: string]: unknown;
}

/** A successful assistant turn: text, optionally with tool calls. */
export interface FakeSuccessReply {
  /** Assistant text. With tool calls and `""`, the wire carries `content: null` like OpenAI. */
  content: string;
  /**
   * Tool calls; `id` defaults to `call_<request index>_<position>`. `arguments` given as a
   * string goes on the wire verbatim, so a test can send what a faulty model does (JSON that
   * does not parse, a JSON array); an object is serialised.
   */
  toolCalls?: Array<{ id?: string; name: string; arguments: Record<string, unknown> | string }>;
  /** Wait this long before answering (aborted early if the client disconnects). */
  delayMs?: number;
  /** Token usage; defaults to a rough chars/4 estimate so `usage_metadata` is always present. */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** An HTTP error reply, sent as `{ error: { message, type, code: null, param: null } }`. */
export interface FakeErrorReply {
  /** HTTP status, 400–599. Note that 408/409/429/5xx are retried unless `maxRetries: 0`. */
  status: number;
  error: { message: string; type?: string };
  delayMs?: number;
  /** Extra response headers, e.g. `{ "retry-after": "0" }` (a 429 is retried only with one). */
  headers?: Record<string, string>;
}

/**
 * A request the server never finishes answering, as a stuck provider does: `"before-reply"`
 * sends nothing at all, `"mid-stream"` sends the status line, headers and (for a streamed
 * request) a first chunk of text, then nothing more. Either way the request stays open until
 * the client gives up (recorded in {@link FakeOpenAIServer.aborted}) or the server closes.
 */
export interface FakeHangReply {
  hang: "before-reply" | "mid-stream";
}

/** The connection is destroyed without an answer (the client sees a reset / socket hang-up). */
export interface FakeResetReply {
  reset: true;
}

/** What a handler tells the server to answer. */
export type FakeReply = FakeSuccessReply | FakeErrorReply | FakeHangReply | FakeResetReply;

/**
 * Produces the reply to one chat-completions request. `index` is the 0-based position of the
 * request among all chat-completions requests this server received. Throwing (or rejecting)
 * yields an HTTP 500 and a `failures` entry.
 */
export type FakeHandler = (
  request: ChatCompletionRequestBody,
  index: number,
) => FakeReply | Promise<FakeReply>;

/** A running fake server. */
export interface FakeOpenAIServer {
  /** Base URL ending in `/v1`: pass it as `configuration.baseURL` or `OPENAI_BASE_URL`. */
  url: string;
  /** Every chat-completions request body received, in arrival order. */
  requests: ChatCompletionRequestBody[];
  /** The `Authorization` header of each entry in `requests` (same index; any value is accepted). */
  authorizations: Array<string | undefined>;
  /**
   * Every `POST /v1/embeddings` request, in arrival order: the model, how many texts, the
   * encoding asked for and the `Authorization` header.
   */
  embeddingRequests: EmbeddingRequestRecord[];
  /** Indices (into `requests`) whose client disconnected before the reply was complete. */
  aborted: number[];
  /** Handler errors and unexpected requests; a test should assert this is empty. */
  failures: string[];
  /** Stops listening, drops open connections and cancels pending delays. Idempotent. */
  close(): Promise<void>;
}

/** What {@link FakeOpenAIServer.embeddingRequests} keeps of one embeddings request. */
export interface EmbeddingRequestRecord {
  model: string;
  inputs: number;
  encoding_format: unknown;
  authorization: string | undefined;
}

/** Models the embeddings route serves: `hash-<n>` answers `n`-dimensional vectors. */
const HASH_MODEL = /^hash-(\d{1,4})$/;

/** Thrown inside the server to answer with a specific status and record a failure. */
class RequestRejected extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isErrorReply = (reply: FakeReply): reply is FakeErrorReply => "error" in reply;
const isHangReply = (reply: FakeReply): reply is FakeHangReply => "hang" in reply;
const isResetReply = (reply: FakeReply): reply is FakeResetReply => "reset" in reply;

const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/** Narrows a parsed JSON body to the subset of the request shape the server relies on. */
function toRequestBody(value: unknown): ChatCompletionRequestBody {
  if (!isRecord(value)) throw new RequestRejected(400, "request body is not a JSON object");
  const { model, messages } = value;
  if (typeof model !== "string") throw new RequestRejected(400, "request body has no model");
  if (!Array.isArray(messages) || !messages.every(isRecord)) {
    throw new RequestRejected(400, "request body has no messages array");
  }
  // The checks above cover the required fields; the optional ones are passed through as sent
  // so tests can assert on exactly what the client serialised.
  return value as ChatCompletionRequestBody;
}

/** Splits text into up to `parts` non-empty pieces on code-point boundaries. */
function splitIntoPieces(text: string, parts: number): string[] {
  const codePoints = Array.from(text);
  if (codePoints.length === 0) return [];
  const size = Math.max(1, Math.ceil(codePoints.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < codePoints.length; i += size) {
    pieces.push(codePoints.slice(i, i + size).join(""));
  }
  return pieces;
}

/** Stable-enough token estimate: nobody asserts exact numbers unless they pass `usage`. */
const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

function usageBlock(
  request: ChatCompletionRequestBody,
  reply: FakeSuccessReply,
): Record<string, unknown> {
  const promptTokens =
    reply.usage?.prompt_tokens ?? estimateTokens(JSON.stringify(request.messages));
  const completionTokens =
    reply.usage?.completion_tokens ??
    estimateTokens(reply.content + JSON.stringify(reply.toolCalls ?? []));
  // The detail objects mirror what api.openai.com sends; ChatOpenAI maps them into
  // input_token_details / output_token_details.
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

function wireToolCalls(reply: FakeSuccessReply, index: number): WireToolCall[] {
  return (reply.toolCalls ?? []).map((call, position) => ({
    id: call.id ?? `call_${index}_${position}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
  }));
}

/**
 * Where a request's history breaks OpenAI's tool-call pairing rule, in OpenAI's own words; null
 * when it is valid. Every assistant message with `tool_calls` must be followed, before any other
 * message, by one tool message for each of its call ids, and a tool message must answer a call
 * of the assistant message before it. api.openai.com answers 400 to anything else, and a thread
 * holding such a history can never be continued.
 */
export function toolCallPairingError(
  messages: ReadonlyArray<Record<string, unknown>>,
): string | null {
  let pending: string[] = [];
  let callsOfTurn = new Set<string>();
  for (const message of messages) {
    if (message.role === "tool") {
      const id = typeof message.tool_call_id === "string" ? message.tool_call_id : "";
      if (!callsOfTurn.has(id)) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (tool_call_id ${JSON.stringify(id)})`;
      }
      pending = pending.filter((candidate) => candidate !== id);
      continue;
    }
    if (pending.length > 0) break;
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
    const ids = calls.map((call) => (isRecord(call) && typeof call.id === "string" ? call.id : ""));
    pending = message.role === "assistant" ? ids : [];
    callsOfTurn = new Set(pending);
  }
  if (pending.length === 0) return null;
  return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(", ")}`;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  headers: Record<string, string> = {},
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, status, { error: { message, type, code: null, param: null } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Options of {@link startFakeOpenAIServer}. */
export interface FakeOpenAIServerOptions {
  /**
   * Refuse a request whose history breaks the tool-call pairing rule (see
   * {@link toolCallPairingError}) with OpenAI's 400, before the handler sees it, and record it in
   * `failures`. Default true: a client that sends such a history has left a thread unusable.
   */
  checkToolCallPairing?: boolean;
}

/**
 * Starts a fake OpenAI server on 127.0.0.1 with an OS-assigned port.
 *
 * Routes: `POST /v1/chat/completions` (JSON or SSE, per the request's `stream` flag),
 * `POST /v1/embeddings` (deterministic vectors, see {@link hashedEmbedding}: model `hash-<n>`
 * answers `n` dimensions whatever `dimensions` asks, as a model of fixed size does; floats only,
 * and `encoding_format: "base64"` is refused so a client that asks for it shows up) and
 * `GET /v1/models` (a one-entry list, for clients that probe it). Anything else is a 404 and a
 * `failures` entry.
 */
export async function startFakeOpenAIServer(
  handler: FakeHandler,
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const checkPairing = options.checkToolCallPairing ?? true;
  const requests: ChatCompletionRequestBody[] = [];
  const authorizations: Array<string | undefined> = [];
  const aborted: number[] = [];
  const failures: string[] = [];
  const embeddingRequests: EmbeddingRequestRecord[] = [];
  // Lets close() cancel handler delays that would otherwise keep the event loop busy.
  const inFlight = new Set<AbortController>();
  let completionCounter = 0;
  let closing: Promise<void> | undefined;

  async function handleCompletion(
    req: IncomingMessage,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readBody(req));
    } catch {
      throw new RequestRejected(400, "request body is not valid JSON");
    }
    const request = toRequestBody(parsed);
    const index = requests.length;
    requests.push(request);
    authorizations.push(req.headers.authorization);
    const markAborted = (): void => {
      // Requests cut off by close() are the test's doing, not a client disconnect.
      if (closing === undefined) aborted.push(index);
    };
    signal.addEventListener("abort", markAborted, { once: true });

    const pairing = checkPairing ? toolCallPairingError(request.messages) : null;
    if (pairing !== null) {
      failures.push(`request #${index} (model ${request.model}): ${pairing}`);
      sendError(res, 400, pairing, "invalid_request_error");
      return;
    }

    let reply: FakeReply;
    try {
      reply = await handler(request, index);
    } catch (error) {
      failures.push(
        `request #${index} (model ${request.model}): handler threw: ${errorMessage(error)}`,
      );
      if (!signal.aborted) sendError(res, 500, errorMessage(error), "fake_server_handler_error");
      return;
    }

    if (isResetReply(reply)) {
      // Our own doing, not the client giving up: not an `aborted` entry.
      signal.removeEventListener("abort", markAborted);
      res.destroy();
      return;
    }
    if (isHangReply(reply)) {
      if (reply.hang === "mid-stream") {
        const streamed = request.stream === true;
        res.writeHead(200, {
          "content-type": streamed ? "text/event-stream; charset=utf-8" : "application/json",
        });
        if (streamed) {
          const first = {
            id: "chatcmpl-fake-hang",
            object: "chat.completion.chunk",
            created: Math.floor(Date.now() / 1000),
            model: request.model,
            choices: [
              {
                index: 0,
                delta: { role: "assistant", content: "Let me" },
                logprobs: null,
                finish_reason: null,
              },
            ],
          };
          res.write(`data: ${JSON.stringify(first)}\n\n`);
        }
      }
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (reply.delayMs !== undefined && reply.delayMs > 0) {
      try {
        await sleep(reply.delayMs, undefined, { signal });
      } catch {
        return; // client went away (or the server is closing): nobody to answer
      }
    }
    if (signal.aborted) return;

    if (isErrorReply(reply)) {
      if (reply.status < 400 || reply.status > 599) {
        failures.push(`request #${index}: error reply has non-error status ${reply.status}`);
        sendError(res, 500, `invalid fake status ${reply.status}`, "fake_server_error");
        return;
      }
      sendError(
        res,
        reply.status,
        reply.error.message,
        reply.error.type ?? "invalid_request_error",
        reply.headers,
      );
      return;
    }

    completionCounter += 1;
    const meta = {
      id: `chatcmpl-fake-${completionCounter}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      system_fingerprint: "fp_fake",
    };
    const toolCalls = wireToolCalls(reply, index);
    const finishReason = toolCalls.length > 0 ? "tool_calls" : "stop";
    if (request.stream === true) {
      await streamCompletion(res, signal, request, reply, meta, toolCalls, finishReason);
    } else {
      sendJson(res, 200, {
        ...meta,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              // OpenAI sends null rather than "" when the turn is only tool calls.
              content: reply.content === "" && toolCalls.length > 0 ? null : reply.content,
              refusal: null,
              ...(toolCalls.length > 0
                ? {
                    tool_calls: toolCalls.map((call) => ({
                      id: call.id,
                      type: "function",
                      function: { name: call.name, arguments: call.arguments },
                    })),
                  }
                : {}),
            },
            logprobs: null,
            finish_reason: finishReason,
          },
        ],
        usage: usageBlock(request, reply),
      });
    }
  }

  async function streamCompletion(
    res: ServerResponse,
    signal: AbortSignal,
    request: ChatCompletionRequestBody,
    reply: FakeSuccessReply,
    meta: Record<string, unknown>,
    toolCalls: WireToolCall[],
    finishReason: string,
  ): Promise<void> {
    const includeUsage = request.stream_options?.include_usage === true;
    // With include_usage, OpenAI puts `usage: null` on every chunk but the last one.
    const usageField = includeUsage ? { usage: null } : {};
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      ...meta,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...usageField,
    });

    const events: unknown[] = [
      chunk({
        role: "assistant",
        content: toolCalls.length > 0 && reply.content === "" ? null : "",
        refusal: null,
      }),
    ];
    for (const piece of splitIntoPieces(reply.content, 4)) events.push(chunk({ content: piece }));
    toolCalls.forEach((call, position) => {
      // The first delta of a call names it; the arguments then follow in fragments that are
      // not valid JSON on their own, which is what the client has to stitch back together.
      events.push(
        chunk({
          tool_calls: [
            {
              index: position,
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: "" },
            },
          ],
        }),
      );
      for (const piece of splitIntoPieces(call.arguments, 3)) {
        events.push(chunk({ tool_calls: [{ index: position, function: { arguments: piece } }] }));
      }
    });
    events.push(chunk({}, finishReason));
    if (includeUsage) {
      events.push({
        ...meta,
        object: "chat.completion.chunk",
        choices: [],
        usage: usageBlock(request, reply),
      });
    }

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    for (const event of events) {
      if (signal.aborted) return;
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      // Yield between events so they leave as separate writes and a disconnect is noticed.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (signal.aborted) return;
    res.end("data: [DONE]\n\n");
  }

  async function handleEmbeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readBody(req));
    } catch {
      throw new RequestRejected(400, "embeddings request body is not valid JSON");
    }
    if (!isRecord(parsed)) throw new RequestRejected(400, "embeddings request is not an object");
    const { model, input, encoding_format } = parsed;
    const inputs = typeof input === "string" ? [input] : input;
    if (typeof model !== "string" || !Array.isArray(inputs)) {
      throw new RequestRejected(400, "embeddings request needs model and input");
    }
    embeddingRequests.push({
      model,
      inputs: inputs.length,
      encoding_format,
      authorization: req.headers.authorization,
    });
    const size = HASH_MODEL.exec(model)?.[1];
    if (size === undefined) {
      sendError(res, 404, `The model \`${model}\` does not exist`, "invalid_request_error");
      return;
    }
    if (encoding_format === "base64") {
      throw new RequestRejected(400, "this fake serves floats only: send encoding_format float");
    }
    sendJson(res, 200, {
      object: "list",
      model,
      data: inputs.map((text, index) => ({
        object: "embedding",
        index,
        embedding: hashedEmbedding(String(text), Number(size)),
      })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  }

  const server = createServer((req, res) => {
    const controller = new AbortController();
    inFlight.add(controller);
    // "close" on the response fires both after a normal end and on a dropped connection;
    // only the latter (response not finished) means the client gave up.
    res.once("close", () => {
      inFlight.delete(controller);
      if (!res.writableFinished) controller.abort();
    });
    // Writes racing a disconnect must not surface as an unhandled 'error' event.
    res.on("error", () => {});

    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const route = `${req.method ?? "?"} ${path}`;
    const work = async (): Promise<void> => {
      if (route === "POST /v1/chat/completions") {
        await handleCompletion(req, res, controller.signal);
      } else if (route === "POST /v1/embeddings") {
        await handleEmbeddings(req, res);
      } else if (route === "GET /v1/models") {
        sendJson(res, 200, {
          object: "list",
          data: [{ id: "gpt-4o-mini", object: "model", created: 0, owned_by: "fake" }],
        });
      } else {
        req.resume();
        throw new RequestRejected(404, `unexpected request: ${route}`);
      }
    };
    work().catch((error: unknown) => {
      const status = error instanceof RequestRejected ? error.status : 500;
      failures.push(errorMessage(error));
      if (!res.headersSent && !controller.signal.aborted) {
        sendError(res, status, errorMessage(error), "invalid_request_error");
      } else if (!res.writableEnded) {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    embeddingRequests,
    aborted,
    failures,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve, reject) => {
        for (const controller of inFlight) controller.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        // The client keeps connections alive; without this, close() waits for them to idle out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** A script whose steps answer successive requests, one each. */
export interface StrictScript {
  /** Pass this to {@link startFakeOpenAIServer} (or to {@link routeByModel}). */
  handler: FakeHandler;
  /** How many steps have been consumed so far. */
  readonly used: number;
  /** Throws if any step has not been consumed. */
  assertComplete(): void;
}

/**
 * Builds a handler that answers the n-th request it sees with `steps[n]`. A request beyond the
 * script throws (so the server answers 500 and records a failure); `assertComplete()` throws
 * when steps remain, catching an agent that stopped earlier than the test expected.
 *
 * The cursor belongs to the script, not the server, so several scripts can be combined with
 * {@link routeByModel} and each advances only on its own model's requests.
 */
export function createStrictScript(steps: readonly FakeHandler[]): StrictScript {
  let cursor = 0;
  return {
    handler: (request, index) => {
      const step = steps[cursor];
      if (step === undefined) {
        throw new Error(
          `strict script exhausted: request #${index} (model ${request.model}) arrived after all ${steps.length} step(s) were used`,
        );
      }
      cursor += 1;
      return step(request, index);
    },
    get used() {
      return cursor;
    },
    assertComplete() {
      if (cursor < steps.length) {
        throw new Error(
          `strict script incomplete: ${steps.length - cursor} of ${steps.length} step(s) never requested`,
        );
      }
    },
  };
}

/**
 * Dispatches each request to the handler registered for its `model` field, e.g. one script
 * for the parent agent's model and another for a subagent's. An unknown model throws, which
 * lands in `failures`. `index` passed on is still the server-wide request index.
 */
export function routeByModel(map: Record<string, FakeHandler>): FakeHandler {
  return (request, index) => {
    // hasOwn: a model named "constructor" must not reach Object.prototype.
    const target = Object.hasOwn(map, request.model) ? map[request.model] : undefined;
    if (target === undefined) {
      throw new Error(
        `no handler for model "${request.model}" (known: ${Object.keys(map).join(", ") || "none"})`,
      );
    }
    return target(request, index);
  };
}
