/**
 * The subagent list the task middleware appends to a main agent's system message, written and
 * read in one place: the middleware writes it, a replay test reads it back out of the prompt it
 * was sent (`models/model-request.ts`), so both must agree on the format.
 */

/** The heading above the subagent list in the system message (the offline model looks for it). */
export const SUBAGENT_LIST_HEADING = "Subagents you can call with the `task` tool:";

/** A subagent as the list names it. */
export interface ListedSubagent {
  slug: string;
  description: string;
}

const LISTED_LINE = /^- ([a-z0-9][a-z0-9-]{0,62}): (.*)$/;

/** The section: the heading, then one `- slug: description` line per subagent. */
export function formatSubagentListing(subagents: readonly ListedSubagent[]): string {
  return [
    SUBAGENT_LIST_HEADING,
    ...subagents.map((subagent) => `- ${subagent.slug}: ${oneLine(subagent.description)}`),
  ].join("\n");
}

/**
 * `system` split into the subagents its list names and the rest of the prompt (the text before
 * and after the section, joined by a blank line). A prompt without the heading line lists none;
 * list items of the agent's own prompt above the heading stay in the prompt.
 */
export function splitSubagentListing(system: string): {
  prompt: string;
  subagents: ListedSubagent[];
} {
  const lines = system.split("\n");
  const heading = lines.lastIndexOf(SUBAGENT_LIST_HEADING);
  if (heading < 0) return { prompt: system, subagents: [] };
  const subagents: ListedSubagent[] = [];
  let end = heading + 1;
  for (; end < lines.length; end += 1) {
    const match = LISTED_LINE.exec(lines[end] ?? "");
    if (match?.[1] === undefined || match[2] === undefined) break;
    subagents.push({ slug: match[1], description: match[2] });
  }
  const before = lines.slice(0, heading).join("\n").trimEnd();
  const after = lines.slice(end).join("\n").trimStart();
  return { prompt: [before, after].filter(Boolean).join("\n\n"), subagents };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim() || "(no description)";
}
