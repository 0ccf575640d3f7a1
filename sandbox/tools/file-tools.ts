import { type StructuredToolInterface, type ToolRuntime, tool } from "@langchain/core/tools";
import { z } from "zod";
import type { FileWriteArtifact } from "../artifacts.js";
import type { SandboxLayout } from "../layout.js";
import { DEFAULT_FILE_TOOL_LIMITS, type FileToolLimits } from "../limits.js";
import { editFile } from "../ops/edit.js";
import { findFiles, formatFoundFiles } from "../ops/glob.js";
import { grepFiles } from "../ops/grep.js";
import { listPath } from "../ops/list.js";
import { readFileLines } from "../ops/read.js";
import { writeTextFile } from "../ops/write.js";
import { VirtualRoot } from "../virtual-paths.js";
import { respond } from "./respond.js";

/** Names of the file tools, in the order they are registered. */
export const FILE_TOOL_NAMES = [
  "ls",
  "read_file",
  "write_file",
  "edit_file",
  "glob",
  "grep",
] as const;

const ROOTS = `${VirtualRoot.workspace} (the user's workspace), ${VirtualRoot.uploads} (read-only), ${VirtualRoot.outputs} (results to hand back) and ${VirtualRoot.skills} (read-only)`;
const pathField = (what: string) =>
  z
    .string()
    .describe(
      `${what}: an absolute path under ${VirtualRoot.userData} or ${VirtualRoot.skills}; a relative path is taken from the workspace`,
    );

/**
 * The sandboxed file tools: `ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep`. Each
 * call works in the scope its run's context names (see {@link scopeIdsOf}), through the access
 * policy, and answers every refusal or failure as an error ToolMessage naming the path and the
 * rule. Writes are atomic and return a `file_write` artifact.
 */
export function createFileTools(
  layout: SandboxLayout,
  limits: FileToolLimits = DEFAULT_FILE_TOOL_LIMITS,
): StructuredToolInterface[] {
  const writeReply = (
    outcome: { virtual: string; created: boolean; bytes: number },
    verb?: string,
  ) => {
    const artifact: FileWriteArtifact = { kind: "file_write", path: outcome.virtual };
    return {
      content:
        verb ??
        `${outcome.created ? "created" : "replaced"} ${outcome.virtual} (${outcome.bytes} bytes)`,
      artifact,
    };
  };

  const ls = tool(
    async ({ path }: { path?: string | undefined }, runtime: ToolRuntime) =>
      respond("ls", runtime, layout, async (scope) => ({
        content: await listPath(scope, path ?? VirtualRoot.userData, limits),
      })),
    {
      name: "ls",
      description: `Lists a folder: its files (with sizes) and subfolders. The folders you can use are ${ROOTS}.`,
      schema: z.object({
        path: pathField("folder to list (default /home/gem/user-data)").optional(),
      }),
    },
  );

  const readFile = tool(
    async (
      args: { path: string; offset?: number | undefined; limit?: number | undefined },
      runtime: ToolRuntime,
    ) =>
      respond("read_file", runtime, layout, async (scope) => ({
        content: await readFileLines(scope, args, limits),
      })),
    {
      name: "read_file",
      description: `Reads a text file, returning numbered lines (${limits.readLines} at most per call; use offset and limit for longer files). Binary files are refused.`,
      schema: z.object({
        path: pathField("file to read"),
        offset: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("first line to return, 1-based (default 1)"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(limits.readLines)
          .optional()
          .describe(`lines to return (default ${limits.readLines})`),
      }),
    },
  );

  const writeFile = tool(
    async (args: { path: string; content: string }, runtime: ToolRuntime) =>
      respond("write_file", runtime, layout, async (scope) =>
        writeReply(await writeTextFile(scope, args, limits)),
      ),
    {
      name: "write_file",
      description: `Creates a file, or replaces it entirely, with the given text (folders are created as needed). Put results for the user in ${VirtualRoot.outputs}.`,
      schema: z.object({
        path: pathField("file to write"),
        content: z.string().describe("the whole new content"),
      }),
    },
  );

  const editFileTool = tool(
    async (
      args: {
        path: string;
        old_string: string;
        new_string: string;
        replace_all?: boolean | undefined;
      },
      runtime: ToolRuntime,
    ) =>
      respond("edit_file", runtime, layout, async (scope) => {
        const outcome = await editFile(scope, args, limits);
        return writeReply(
          outcome,
          `replaced ${outcome.replacements} occurrence${outcome.replacements === 1 ? "" : "s"} in ${outcome.virtual}`,
        );
      }),
    {
      name: "edit_file",
      description:
        "Replaces exact text in a file. old_string must occur exactly once unless replace_all is true; read the file first and copy the text exactly.",
      schema: z.object({
        path: pathField("file to edit"),
        old_string: z.string().describe("the exact text to replace"),
        new_string: z.string().describe("the replacement"),
        replace_all: z.boolean().optional().describe("replace every occurrence (default false)"),
      }),
    },
  );

  const globTool = tool(
    async (args: { pattern: string; path?: string | undefined }, runtime: ToolRuntime) =>
      respond("glob", runtime, layout, async (scope) => ({
        content: formatFoundFiles(
          await findFiles(scope, args, limits, runtime.signal),
          args.pattern,
          limits,
        ),
      })),
    {
      name: "glob",
      description: `Finds files by name pattern (e.g. "**/*.md"), relative to path (default the workspace). Returns up to ${limits.globResults} virtual paths.`,
      schema: z.object({
        pattern: z.string().min(1).describe('glob pattern relative to path, e.g. "**/*.csv"'),
        path: pathField("folder to search (default the workspace)").optional(),
      }),
    },
  );

  const grep = tool(
    async (
      args: {
        pattern: string;
        path?: string | undefined;
        glob?: string | undefined;
        ignore_case?: boolean | undefined;
        fixed_strings?: boolean | undefined;
      },
      runtime: ToolRuntime,
    ) =>
      respond("grep", runtime, layout, async (scope) => ({
        content: await grepFiles(scope, args, limits, runtime.signal),
      })),
    {
      name: "grep",
      description: `Searches text files for a regular expression (RE2 syntax) and returns matching lines as path:line: text (up to ${limits.grepMatches}).`,
      schema: z.object({
        pattern: z
          .string()
          .min(1)
          .describe("regular expression, or literal text with fixed_strings"),
        path: pathField("file or folder to search (default the workspace)").optional(),
        glob: z.string().optional().describe('only files matching this glob, e.g. "**/*.ts"'),
        ignore_case: z.boolean().optional(),
        fixed_strings: z.boolean().optional().describe("treat pattern as literal text"),
      }),
    },
  );

  return [ls, readFile, writeFile, editFileTool, globTool, grep];
}
