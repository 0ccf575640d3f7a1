/**
 * The tools an agent searches its knowledge bases with: `kb_search`, `kb_read`, `kb_list`. Each
 * works within the run's knowledge bases (`run-knowledge.ts`), never beyond: a name or id
 * outside them is answered with an error naming the ones the run has, which reveals nothing of
 * other users' knowledge bases. Like every tool here they never throw: a failure is an error
 * ToolMessage the model can read and correct.
 */

import { ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, type ToolRuntime, tool } from "@langchain/core/tools";
import { z } from "zod";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { type KnowledgeAgent, type RunKnowledge, runKnowledge } from "./run-knowledge.js";
import type { KnowledgeBaseRecord } from "./schema.js";
import { DEFAULT_READ_LINES, type KnowledgeBases } from "./service.js";

/** Names of the knowledge tools. */
export const KNOWLEDGE_TOOL_NAMES = ["kb_search", "kb_read", "kb_list"] as const;

/** Files `kb_list` names per knowledge base. */
const LISTED_FILES = 50;

/** The knowledge tools of one agent. */
export function createKnowledgeTools(
  api: KnowledgeBases,
  agent: KnowledgeAgent,
): StructuredToolInterface[] {
  const answer = (
    name: string,
    runtime: ToolRuntime,
    work: (run: RunKnowledge) => Promise<Reply>,
  ) =>
    respond(name, runtime, async () =>
      work(await runKnowledge(api, agent, runtime.context, runtime.configurable)),
    );

  const kbSearch = tool(
    async (
      args: {
        query: string;
        kb?: string | undefined;
        file?: string | undefined;
        top_k?: number | undefined;
      },
      runtime: ToolRuntime,
    ) =>
      answer("kb_search", runtime, async (run) => {
        const bases = args.kb === undefined ? run.bases : [pick(run.bases, args.kb)];
        const hits = await api.searchIn(bases, {
          query: args.query,
          file: args.file,
          top_k: args.top_k,
        });
        if (hits.length === 0) {
          return {
            content: `no matches for ${JSON.stringify(args.query)} in ${names(bases)}${args.file ? ` (file "${args.file}")` : ""}: try other words`,
            artifact: { hits },
          };
        }
        const content = hits
          .map(
            (hit, index) =>
              `[${index + 1}] kb: ${hit.kb} | file: ${hit.file} (file_id ${hit.file_id}) | lines ${hit.line_start}-${hit.line_end} | score ${hit.score.toFixed(3)}\n${hit.text}`,
          )
          .join("\n\n");
        return { content, artifact: { hits } };
      }),
    {
      name: "kb_search",
      description:
        "Searches your knowledge bases for passages about `query` (matched by its words, best first). Each hit names its knowledge base, file, file_id and line span; open more of a file with kb_read.",
      schema: z.object({
        query: z.string().describe("what to look for, in a few words"),
        kb: z
          .string()
          .optional()
          .describe("only this knowledge base (name or id); default: all of yours"),
        file: z.string().optional().describe("only files of this name"),
        top_k: z.number().int().min(1).max(50).optional().describe("hits to return (default 5)"),
      }),
    },
  );

  const kbRead = tool(
    async (
      args: { kb: string; file_id: string; line?: number | undefined; lines?: number | undefined },
      runtime: ToolRuntime,
    ) =>
      answer("kb_read", runtime, async (run) => {
        const read = await api.readIn(pick(run.bases, args.kb), args.file_id, {
          line: args.line,
          lines: args.lines,
        });
        const next =
          read.next_line === null
            ? "(end of file)"
            : `(more from line ${read.next_line}: call kb_read with line ${read.next_line})`;
        return {
          content: `${read.kb} / ${read.file}, lines ${read.line_start}-${read.line_end} of ${read.line_count}:\n${read.text}\n${next}`,
          artifact: read,
        };
      }),
    {
      name: "kb_read",
      description: `Reads a file of one of your knowledge bases as numbered lines (${DEFAULT_READ_LINES} by default), e.g. around a kb_search hit. The answer says where the next lines start.`,
      schema: z.object({
        kb: z.string().describe("the knowledge base (name or id)"),
        file_id: z.string().describe("the file's id, from kb_search or kb_list"),
        line: z.number().int().min(1).optional().describe("first line to show (default 1)"),
        lines: z.number().int().min(1).max(400).optional().describe("how many lines"),
      }),
    },
  );

  const kbList = tool(
    async (_args: Record<string, never>, runtime: ToolRuntime) =>
      answer("kb_list", runtime, async (run) => {
        if (run.bases.length === 0) return { content: "you have no knowledge bases" };
        const sections = await Promise.all(
          run.bases.map(async (kb) => {
            const files = await api.listFiles(run.uid, kb.id);
            const shown = files
              .slice(0, LISTED_FILES)
              .map(
                (file) =>
                  `  - ${file.name} (file_id ${file.id}, ${file.status}, ${file.line_count} lines)`,
              );
            const more =
              files.length > LISTED_FILES ? [`  … and ${files.length - LISTED_FILES} more`] : [];
            return [
              `- ${kb.name}: ${oneLine(kb.description) || "(no description)"}`,
              ...shown,
              ...more,
            ].join("\n");
          }),
        );
        return { content: sections.join("\n") };
      }),
    {
      name: "kb_list",
      description:
        "Lists your knowledge bases with their descriptions and files (names, ids, status).",
      schema: z.object({}),
    },
  );

  return [kbSearch, kbRead, kbList];
}

/** The system prompt section naming the run's knowledge bases. */
export function knowledgePromptSection(bases: readonly KnowledgeBaseRecord[]): string {
  return [
    "Knowledge bases (search them with kb_search, open a file at a line with kb_read, list files with kb_list):",
    ...bases.map((kb) => `- ${kb.name}: ${oneLine(kb.description) || "(no description)"}`),
  ].join("\n");
}

interface Reply {
  content: string;
  artifact?: unknown;
}

/** The run's knowledge base named `kb` (name or id); an error naming the run's own otherwise. */
function pick(bases: readonly KnowledgeBaseRecord[], kb: string): KnowledgeBaseRecord {
  const found = bases.find((base) => base.id === kb) ?? bases.find((base) => base.name === kb);
  if (found) return found;
  throw new SubagentGraphError(
    ErrorCode.NotFound,
    `knowledge base ${JSON.stringify(kb)} is not one of yours: use one of ${names(bases)}`,
    { field: "kb" },
  );
}

function names(bases: readonly KnowledgeBaseRecord[]): string {
  return bases.length === 0 ? "(none)" : bases.map((base) => JSON.stringify(base.name)).join(", ");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

async function respond(
  name: string,
  runtime: ToolRuntime,
  work: () => Promise<Reply>,
): Promise<ToolMessage> {
  const toolCallId = runtime.toolCall?.id ?? runtime.toolCallId ?? "";
  try {
    const reply = await work();
    return new ToolMessage({
      content: reply.content,
      tool_call_id: toolCallId,
      name,
      status: "success",
      ...(reply.artifact === undefined ? {} : { artifact: reply.artifact }),
    });
  } catch (error) {
    if (runtime.signal?.aborted) throw error;
    // Our own messages name only what the caller passed; anything else is reported plainly.
    const text = messageOf(error);
    return new ToolMessage({
      content: `${name} failed: ${text}`,
      tool_call_id: toolCallId,
      name,
      status: "error",
    });
  }
}
