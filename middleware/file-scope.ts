import { createMiddleware } from "langchain";
import { fileScopeOf, readRunContext } from "../run-context.js";
import type { SkillSummary } from "../sandbox/skills/library.js";
import { FILE_TOOL_NAMES } from "../sandbox/tools/file-tools.js";
import { VirtualRoot } from "../sandbox/virtual-paths.js";
import { messagesOf } from "../util/state-messages.js";
import { RUN_ID_KEY } from "./child-run.js";

/** Turns whose skill list is kept in memory between model calls. */
const MAX_REMEMBERED_TURNS = 1000;

/** The heading of the skills section in the system message. */
export const SKILLS_HEADING = "Skills";

/** What the middleware needs from the runtime. */
export interface FileScopeMiddlewareOptions {
  /**
   * Makes the run's skills scope (`skills_thread_id`) hold exactly the agent's configured
   * skills and returns them. Called at the first model call of every turn.
   */
  prepareSkills(skillsThreadId: string): Promise<SkillSummary[]>;
}

/**
 * Gives an agent its file scope in the prompt: where its folders are and which skills it has.
 * At the first model call of each turn the agent's skills are materialised (copied, read-only)
 * into its own skills scope, so a parent's skills never show in a child's `/home/gem/skills` nor
 * the reverse, and a skill installed or removed between two turns shows at the next one; the
 * system message lists each skill's name, description and `SKILL.md` path, and the model reads
 * the body on demand with `read_file`.
 *
 * No graph step of its own: a turn is told by the user message that started it (the newest
 * human message in the state) and the run, so the later model calls of a run keep the skills its
 * first call prepared, and a replay or a resume prepares them again. A `beforeAgent` hook would cost every run one more step
 * and checkpoint (a seventh of a run without task calls, bench/README.md, "Scenario: dispatch").
 */
export function createFileScopeMiddleware(options: FileScopeMiddlewareOptions) {
  // Skills by skills scope and turn; bounded instead of cleaned up by an `afterAgent` hook, which
  // would add a graph node that a cancelled turn's repair (an update without `asNode`) leaves
  // pending.
  const prepared = new Map<string, SkillSummary[]>();
  const remember = (key: string, skills: SkillSummary[]) => {
    prepared.set(key, skills);
    if (prepared.size > MAX_REMEMBERED_TURNS) {
      const oldest = prepared.keys().next().value;
      if (oldest !== undefined) prepared.delete(oldest);
    }
  };
  const skillsFor = async (runtime: RunOf, state: unknown): Promise<SkillSummary[]> => {
    const scope = skillsScopeOf(runtime);
    const key = JSON.stringify([scope, turnOf(state), runOf(runtime)]);
    const known = prepared.get(key);
    if (known) return known;
    const skills = await options.prepareSkills(scope);
    remember(key, skills);
    return skills;
  };

  return createMiddleware({
    name: "FileScope",
    wrapModelCall: async (request, handler) => {
      const toolNames = new Set(request.tools.map(toolName));
      const hasFileTools = FILE_TOOL_NAMES.some((name) => toolNames.has(name));
      const skills = await skillsFor(request.runtime, request.state);
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

/**
 * Which run a model call belongs to, when its host says (our runtime, a LangGraph server): a
 * replay or a resume of a turn prepares the skills again, as a new turn does.
 */
function runOf(runtime: RunOf): string {
  const configurable = runtime.configurable as Record<string, unknown> | undefined;
  const id = configurable?.[RUN_ID_KEY] ?? configurable?.run_id;
  return typeof id === "string" ? id : "";
}

/**
 * Which turn a model call belongs to: the id of the newest human message (the one that started
 * the turn), with its position for a message without an id.
 */
function turnOf(state: unknown): string {
  const messages = messagesOf(state);
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType?.() === "human") return `${i}:${message.id ?? ""}`;
  }
  return "";
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
  context?: unknown;
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
