/**
 * The streaming scenario's model (`scenarios/streaming.ts`): an OpenAI-compatible Chat
 * Completions server that streams every answer one token per SSE chunk, so a server under test
 * has as many `messages` events to carry as the answer has tokens. Both servers of the scenario
 * (ours and the official dev server) reach it through `OPENAI_BASE_URL`, with `ChatOpenAI`
 * underneath, exactly as they would reach api.openai.com.
 *
 * The script, by the request's model and its last message:
 * - `child-model` (a subagent): a text answer of `tokens` tokens, its words labelled with the
 *   subagent's slug (see {@link answerText});
 * - `main-model` after a tool result: a text answer of `tokens` tokens (label `tok`);
 * - `main-model` on a user message containing {@link DELEGATE}: one `task` call to each of the
 *   `subagents` (default {@link STREAM_CHILD}), all in one AI message, so they run in parallel;
 *   otherwise a text answer of `tokens` tokens.
 * `tokens=<n>` in the first user message (what the main agent or the subagent was asked) makes
 * the text answers `n` tokens long instead.
 * Every call waits `latencyMs` before its first chunk (the time to first token of a hosted
 * model); the tokens then follow as fast as the socket takes them (a yield between chunks, so
 * each leaves as a write of its own).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { TASK_TOOL_NAME } from "../../contract.js";

/** A user message containing this makes the main agent delegate to {@link STREAM_CHILD}. */
export const DELEGATE = "delegate";
/** `tokens=<n>` in the first user message (the subagent's too) sets the answers' length. */
const TOKENS_PATTERN = /tokens=(\d{1,6})/;
/** The subagent's slug. */
export const STREAM_CHILD = "worker";

export interface TokenModelOptions {
  /** Delay before an answer's first chunk, in ms. */
  latencyMs: number;
  /** Tokens in every text answer. */
  tokens: number;
  /** The subagents a delegating turn calls, one `task` call each (default {@link STREAM_CHILD}). */
  subagents?: readonly string[];
}

export interface TokenModelServer {
  /** Base URL ending in `/v1` (for `OPENAI_BASE_URL`). */
  url: string;
  /** Chat completion requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

interface ChatRequest {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: { role?: string; content?: unknown }[];
}

interface TaskArgs {
  description: string;
  subagent_type: string;
}
type Reply = { text: string } | { tasks: TaskArgs[] };

/** The label of the main agent's final answer (see {@link answerText}). */
export const MAIN_LABEL = "tok";

/**
 * A text answer of `tokens` words, `label label1 label2 …` (each word one streamed token), as the
 * model writes it: what a client checks a run's final message, or a subagent's result, against.
 */
export function answerText(label: string, tokens: number): string {
  return Array.from({ length: tokens }, (_, i) => `${label}${i === 0 ? "" : i} `).join("");
}

function reply(request: ChatRequest, options: TokenModelOptions): Reply {
  const messages = request.messages ?? [];
  const last = messages.at(-1);
  const asked = String(messages.find((message) => message.role === "user")?.content);
  const tokens = Number(TOKENS_PATTERN.exec(asked)?.[1] ?? options.tokens);
  // A subagent is asked `<slug>: …` (below), so each child's answer names who wrote it.
  if (request.model === "child-model") {
    return { text: answerText(/^(\w+):/.exec(asked)?.[1] ?? "child", tokens) };
  }
  if (last?.role === "user" && String(last.content).includes(DELEGATE)) {
    const length = TOKENS_PATTERN.exec(String(last.content))?.[0] ?? "";
    return {
      tasks: (options.subagents ?? [STREAM_CHILD]).map((slug) => ({
        description: `${slug}: answer at length ${length}`,
        subagent_type: slug,
      })),
    };
  }
  return { text: answerText(MAIN_LABEL, tokens) };
}

async function readJson(req: IncomingMessage): Promise<ChatRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
}

let callCounter = 0;

/** Starts the model on 127.0.0.1, an OS-assigned port. */
export async function startTokenModel(options: TokenModelOptions): Promise<TokenModelServer> {
  let served = 0;
  const server: Server = createServer((req, res) => {
    res.on("error", () => {});
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    void (async () => {
      const request = await readJson(req);
      served += 1;
      const answer = reply(request, options);
      const id = `chatcmpl-bench-${++callCounter}`;
      const base = { id, object: "chat.completion.chunk", created: 0, model: request.model };
      const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(request.stream_options?.include_usage ? { usage: null } : {}),
      });
      if (options.latencyMs > 0) await sleep(options.latencyMs);
      if (!request.stream) {
        const message =
          "text" in answer
            ? { role: "assistant", content: answer.text }
            : {
                role: "assistant",
                content: null,
                tool_calls: answer.tasks.map((task, i) => toolCall(id, i, task)),
              };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [
              { index: 0, message, finish_reason: "text" in answer ? "stop" : "tool_calls" },
            ],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = async (event: unknown) => {
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify(event)}\n\n`);
        await new Promise<void>((resolve) => setImmediate(resolve));
      };
      if ("text" in answer) {
        await send(chunk({ role: "assistant", content: "" }));
        for (const word of answer.text.match(/\S+ /g) ?? []) await send(chunk({ content: word }));
        await send(chunk({}, "stop"));
      } else {
        await send(chunk({ role: "assistant", content: null }));
        for (const [index, task] of answer.tasks.entries()) {
          const call = toolCall(id, index, task);
          await send(
            chunk({
              tool_calls: [
                {
                  index,
                  id: call.id,
                  type: "function",
                  function: { name: call.function.name, arguments: "" },
                },
              ],
            }),
          );
          await send(
            chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }),
          );
        }
        await send(chunk({}, "tool_calls"));
      }
      if (request.stream_options?.include_usage) await send({ ...base, choices: [], usage });
      if (!res.destroyed) res.end("data: [DONE]\n\n");
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function toolCall(id: string, index: number, args: TaskArgs) {
  return {
    // The first call keeps the id it had when a turn made one call only.
    id: index === 0 ? `call_${id}` : `call_${id}_${index}`,
    type: "function",
    function: { name: TASK_TOOL_NAME, arguments: JSON.stringify(args) },
  };
}
