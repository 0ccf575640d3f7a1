import { FILE_TOOL_NAMES } from "../../sandbox/tools/file-tools.js";
import { currentTimeTool } from "../../tools/builtin.js";
import { BenchModel, type CapturedRequest } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { CHILD_PROMPT, childReply, fanOutInput, MAIN_PROMPT, mainReply } from "../lib/scripts.js";
import { deepAgent, type OurSystem, openOurs } from "../lib/systems.js";
import { int, type Table } from "../lib/table.js";

interface Weight {
  system: string;
  role: "main" | "child";
  /** Tools the agent was configured with (undefined = every registered tool). */
  ownTools: string[];
  toolsSent: string[];
  toolSchemaChars: number;
  /** Schema characters of tools the agent was not configured with (what the framework adds). */
  addedToolSchemaChars: number;
  addedTools: string[];
  systemChars: number;
  /** System text beyond the agent's own prompt. */
  addedSystemChars: number;
  onlyOwnTools: boolean;
  /** The captured request, for inspection. */
  request: CapturedRequest;
}

/**
 * The prompt scenario: what each system sends the model on the main agent's first call and on the
 * child's call: the tools' JSON definitions (OpenAI function format) and the system text.
 * The main agent has no tools of its own; the child has one (`current_time`). A second
 * configuration of ours keeps the default tool set (every registered tool: current_time and the
 * six file tools), as `npm start` agents have.
 */
export const promptScenario: Scenario = {
  name: "prompt",
  title: "Prompt weight",
  async run() {
    const weights: Weight[] = [
      ...(await oursWeights("ours", [], ["current_time"])),
      ...(await oursWeights("ours, default tool set", "all", "all")),
      ...(await deepWeights()),
    ];
    const table: Table = {
      title: "Prompt weight: what each model call carries (characters)",
      headers: [
        "system",
        "agent",
        "tools sent",
        "tool schemas",
        "added schemas",
        "system text",
        "added system",
        "tools the framework added",
      ],
      rows: weights.map((w) => [
        w.system,
        w.role,
        w.toolsSent.join(", ") || "(none)",
        int(w.toolSchemaChars),
        int(w.addedToolSchemaChars),
        int(w.systemChars),
        int(w.addedSystemChars),
        w.addedTools.join(", ") || "none",
      ]),
      notes: [
        `own prompts: main ${JSON.stringify(MAIN_PROMPT)} (${MAIN_PROMPT.length} chars), child ${JSON.stringify(CHILD_PROMPT)} (${CHILD_PROMPT.length} chars); own tools: main none, child current_time (ours, default tool set: every registered tool).`,
        "tool schemas = JSON.stringify of each tool's OpenAI function definition { name, description, parameters }; added = tools the agent was not configured with.",
      ],
    };
    const ours = weights.filter((w) => w.system === "ours");
    const oursMain = ours.find((w) => w.role === "main");
    const oursChild = ours.find((w) => w.role === "child");
    const targets: TargetCheck[] = [
      {
        target: "main agent's added tool schema ≤ 1,500 chars",
        met: oursMain !== undefined && oursMain.addedToolSchemaChars <= 1500,
        detail: `${int(oursMain?.addedToolSchemaChars)} chars (${oursMain?.addedTools.join(", ")}), plus ${int(oursMain?.addedSystemChars)} chars of system text`,
      },
      {
        target: "a child is sent only its own tools",
        met: oursChild?.onlyOwnTools === true,
        detail: `child sent [${oursChild?.toolsSent.join(", ")}], configured [${oursChild?.ownTools.join(", ")}]`,
      },
    ];
    return { tables: [table], data: { weights }, targets };
  },
};

async function oursWeights(
  label: string,
  mainTools: string[] | "all",
  childTools: string[] | "all",
): Promise<Weight[]> {
  const captured = { main: [] as CapturedRequest[], child: [] as CapturedRequest[] };
  const main = new BenchModel("main", mainReply, { capture: (r) => captured.main.push(r) });
  const child = new BenchModel("child", childReply, { capture: (r) => captured.child.push(r) });
  const ours = (await openOurs({
    saver: "memory",
    mainModel: main,
    childModel: child,
    mainTools,
    childTools,
  })) as OurSystem;
  try {
    await ours.run(fanOutInput(1));
    // `tools` unset: every registered tool is the agent's own.
    const registered = [currentTimeTool.name, ...FILE_TOOL_NAMES];
    const own = (tools: string[] | "all") => (tools === "all" ? registered : tools);
    return [
      weigh(label, "main", captured.main[0], MAIN_PROMPT, own(mainTools)),
      weigh(label, "child", captured.child[0], CHILD_PROMPT, own(childTools)),
    ];
  } finally {
    await ours.dispose();
  }
}

async function deepWeights(): Promise<Weight[]> {
  const captured = { main: [] as CapturedRequest[], child: [] as CapturedRequest[] };
  const main = new BenchModel("main", mainReply, { capture: (r) => captured.main.push(r) });
  const child = new BenchModel("child", childReply, { capture: (r) => captured.child.push(r) });
  // Only its saver is used.
  const host = (await openOurs({
    saver: "memory",
    mainModel: main,
    childModel: child,
  })) as OurSystem;
  try {
    const deep = deepAgent(main, child, host.saver, [currentTimeTool]);
    await deep.run(fanOutInput(1));
    return [
      weigh("Deep Agents", "main", captured.main[0], MAIN_PROMPT, []),
      weigh("Deep Agents", "child", captured.child[0], CHILD_PROMPT, ["current_time"]),
    ];
  } finally {
    await host.dispose();
  }
}

function weigh(
  system: string,
  role: "main" | "child",
  request: CapturedRequest | undefined,
  ownPrompt: string,
  ownTools: string[],
): Weight {
  if (!request) throw new Error(`prompt scenario: no ${role} call captured for ${system}`);
  const own = new Set(ownTools);
  const added = request.tools.filter((tool) => !own.has(tool.name));
  const toolsSent = request.tools.map((tool) => tool.name);
  return {
    system,
    role,
    ownTools,
    toolsSent,
    toolSchemaChars: request.tools.reduce((sum, tool) => sum + tool.json.length, 0),
    addedToolSchemaChars: added.reduce((sum, tool) => sum + tool.json.length, 0),
    addedTools: added.map((tool) => tool.name),
    systemChars: request.system.length,
    addedSystemChars:
      request.system.length - (request.system.includes(ownPrompt) ? ownPrompt.length : 0),
    onlyOwnTools:
      added.length === 0 && toolsSent.length === own.size && toolsSent.every((t) => own.has(t)),
    request,
  };
}
