import { createMiddleware } from "langchain";
import { fileScopeOf, readRunContext, runContextKeysSchema } from "../run-context.js";
import type { SkillSummary } from "../sandbox/skills/library.js";
import { FILE_TOOL_NAMES } from "../sandbox/tools/file-tools.js";
import { VirtualRoot } from "../sandbox/virtual-paths.js";

/** Skills scopes whose skill list is kept in memory between model calls. */
const MAX_REMEMBERED_SCOPES = 1000;

/** The heading of the skills section in the system message. */
export const SKILLS_HEADING = "Skills";

/** What the middleware needs from the runtime. */
export interface FileScopeMiddlewareOptions {
  /**
   * Makes the run's skills scope (`skills_thread_id`) hold exactly the agent's configured
   * skills and returns them. Called once at the start of every run of the agent.
   */
  prepareSkills(skillsThreadId: string): Promise<SkillSummary[]>;
  /**
   * Prepare the skills again at the start of every run (a `beforeAgent` hook, so one more graph
   * step per run), for agents whose thread takes many runs: a skill installed or removed
   * between two turns then shows at the next one. Without it the skills are prepared once per
   * scope, at its first model call: right for subagents, whose every run has a new child
   * thread (and so a new scope), and one step cheaper per child.
   */
  refreshEachRun: boolean;
}

/**
 * Gives an agent its file scope in the prompt: where its folders are and which skills it has.
 * At the start of each run the agent's skills are materialised (copied, read-only) into its own
 * skills scope, so a parent's skills never show in a child's `/home/gem/skills` nor the reverse;
 * the system message lists each skill's name, description and `SKILL.md` path, and the model
 * reads the body on demand with `read_file`.
 */
export function createFileScopeMiddleware(options: FileScopeMiddlewareOptions) {
  // Skills of recent runs, by skills scope, refreshed by every run's `beforeAgent`; a run that
  // resumed without passing through it prepares them on its first model call. No `afterAgent`
  // hook cleans up: it would add a graph node, and a cancelled turn's repair (an update without
  // `asNode`) would then leave that node pending. The map is bounded instead.
  const prepared = new Map<string, SkillSummary[]>();
  const remember = (scope: string, skills: SkillSummary[]) => {
    prepared.delete(scope);
    prepared.set(scope, skills);
    if (prepared.size > MAX_REMEMBERED_SCOPES) {
      const oldest = prepared.keys().next().value;
      if (oldest !== undefined) prepared.delete(oldest);
    }
  };
  const skillsFor = async (runtime: RunOf): Promise<SkillSummary[]> => {
    const scope = skillsScopeOf(runtime);
    const known = prepared.get(scope);
    if (known) return known;
    const skills = await options.prepareSkills(scope);
    remember(scope, skills);
    return skills;
  };

  return createMiddleware({
    name: "FileScope",
    // Hooks see only the context keys their middleware declares: all of the run context's.
    contextSchema: runContextKeysSchema,
    ...(options.refreshEachRun
      ? {
          beforeAgent: async (_state: unknown, runtime: RunOf) => {
            const scope = skillsScopeOf(runtime);
            remember(scope, await options.prepareSkills(scope));
            return undefined;
          },
        }
      : {}),
    wrapModelCall: async (request, handler) => {
      const toolNames = new Set(request.tools.map(toolName));
      const hasFileTools = FILE_TOOL_NAMES.some((name) => toolNames.has(name));
      const skills = await skillsFor(request.runtime);
      const sections = [
        hasFileTools ? FILES_PROMPT_SECTION : "",
        skills.length > 0 ? skillsSection(skills, toolNames.has("read_file")) : "",
      ].filter(Boolean);
      if (sections.length === 0) return handler(request);
      // concat() joins without a separator: start each section on its own paragraph.
      return handler({
        ...request,
        systemMessage: request.systemMessage.concat(`\n\n${sections.join("\n\n")}`),
      });
    },
  });
}

/** The section describing the virtual folders, appended when the agent has a file tool. */
export const FILES_PROMPT_SECTION = [
  "Files (use ls, read_file, write_file, edit_file, glob, grep; paths are absolute):",
  `- ${VirtualRoot.workspace}: the user's workspace, kept across conversations`,
  `- ${VirtualRoot.uploads}: files the user attached to this conversation (read-only)`,
  `- ${VirtualRoot.outputs}: write the files you produce for the user here`,
].join("\n");

function skillsSection(skills: readonly SkillSummary[], canRead: boolean): string {
  return [
    `${SKILLS_HEADING} (read-only folders of instructions under ${VirtualRoot.skills}; ${
      canRead
        ? "when a task matches a skill's description, read its SKILL.md with read_file first"
        : "you have no read_file tool, so you can only go by their descriptions"
    }):`,
    ...skills.map(
      (skill) =>
        `- ${skill.name}: ${skill.description.replace(/\s+/g, " ").trim()} (${VirtualRoot.skills}/${skill.name}/SKILL.md)`,
    ),
  ].join("\n");
}

/** What the hooks are handed of a run: its context and config. */
interface RunOf {
  context: unknown;
  configurable?: unknown;
}

/**
 * The run's skills scope (`skills_thread_id`, else its thread, which a host may set only in the
 * config).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` when the run's context is missing or malformed
 */
function skillsScopeOf(runtime: RunOf): string {
  const context = readRunContext(runtime.context, runtime.configurable, { reader: "skills" });
  return fileScopeOf(context).skillsThreadId;
}

function toolName(tool: unknown): string {
  const named = tool as { name?: unknown };
  return typeof named.name === "string" ? named.name : "";
}
