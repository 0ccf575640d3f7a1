import { canonicalJson } from "../util/canonical-json.js";
import type { RecordedMessage, RecordedRequest } from "./model-request.js";

/**
 * The parts of a model call a replay compares with its recording, each on unless switched off.
 * Switch one off for an intentional change (and re-record the fixture when it is final).
 */
export interface RequestMatch {
  /** The tools offered: names, order and the hash of each definition. */
  tools?: boolean;
  /** The subagents the system prompt lists (slugs, descriptions, order). */
  subagents?: boolean;
  /** The system prompt, without the subagent list. */
  systemPrompt?: boolean;
  /** The input messages up to the call. */
  messages?: boolean;
}

/** A field of {@link RequestMatch}. */
export type RequestField = keyof RequestMatch;

/** One field in which a call differs from its recording, described for a person. */
export interface RequestDifference {
  field: RequestField;
  text: string;
}

/** Lines of a long text shown on each side of a diff. */
const MAX_DIFF_LINES = 4;
/** Characters of one line shown in a diff. */
const MAX_LINE_CHARS = 160;

/**
 * How `actual` differs from `recorded` in the fields `match` compares (empty when they agree):
 * tools and subagents first, since a change there also changes the prompt (no file tools, no
 * files section), then the system prompt, then the messages.
 */
export function requestDifferences(
  recorded: RecordedRequest,
  actual: RecordedRequest,
  match: Required<RequestMatch>,
): RequestDifference[] {
  const differences: RequestDifference[] = [];
  if (match.tools) {
    const text = toolsDiff(recorded, actual);
    if (text) differences.push({ field: "tools", text });
  }
  if (match.subagents) {
    const text = subagentsDiff(recorded, actual);
    if (text) differences.push({ field: "subagents", text });
  }
  if (match.systemPrompt && recorded.system_prompt !== actual.system_prompt) {
    differences.push({
      field: "systemPrompt",
      text: `system prompt differs from the recording:\n${textDiff(recorded.system_prompt, actual.system_prompt)}`,
    });
  }
  if (match.messages) {
    const text = messagesDiff(recorded.messages, actual.messages);
    if (text) differences.push({ field: "messages", text });
  }
  return differences;
}

function subagentsDiff(recorded: RecordedRequest, actual: RecordedRequest): string | undefined {
  const before = new Map(recorded.subagents.map((s) => [s.slug, s.description]));
  const after = new Map(actual.subagents.map((s) => [s.slug, s.description]));
  const parts = [
    ...namesPart(
      "added",
      [...after.keys()].filter((slug) => !before.has(slug)),
    ),
    ...namesPart(
      "removed",
      [...before.keys()].filter((slug) => !after.has(slug)),
    ),
  ];
  for (const [slug, description] of after) {
    const old = before.get(slug);
    if (old !== undefined && old !== description) {
      parts.push(`description of ${slug} changed:\n${textDiff(old, description)}`);
    }
  }
  if (parts.length === 0) {
    const order = (request: RecordedRequest) => request.subagents.map((s) => s.slug).join(", ");
    if (order(recorded) === order(actual)) return undefined;
    parts.push(`order changed: was ${order(recorded)}, now ${order(actual)}`);
  }
  return `subagents listed differ: ${parts.join("; ")}`;
}

function toolsDiff(recorded: RecordedRequest, actual: RecordedRequest): string | undefined {
  const before = new Map(recorded.tools.map((tool) => [tool.name, tool.schema]));
  const after = new Map(actual.tools.map((tool) => [tool.name, tool.schema]));
  const changed = [...after].filter(([name, schema]) => {
    const old = before.get(name);
    return old !== undefined && old !== schema;
  });
  const parts = [
    ...namesPart(
      "removed",
      [...before.keys()].filter((name) => !after.has(name)),
    ),
    ...namesPart(
      "added",
      [...after.keys()].filter((name) => !before.has(name)),
    ),
    ...namesPart(
      "definition (description or argument schema) changed of",
      changed.map(([name]) => name),
    ),
  ];
  if (parts.length === 0) {
    const order = (request: RecordedRequest) => request.tools.map((t) => t.name).join(", ");
    if (order(recorded) === order(actual)) return undefined;
    parts.push(`order changed: was ${order(recorded)}, now ${order(actual)}`);
  }
  return `tools differ: ${parts.join("; ")}`;
}

function namesPart(label: string, names: readonly string[]): string[] {
  return names.length > 0 ? [`${label} ${names.join(", ")}`] : [];
}

function messagesDiff(
  recorded: readonly RecordedMessage[],
  actual: readonly RecordedMessage[],
): string | undefined {
  const length = Math.max(recorded.length, actual.length);
  for (let index = 0; index < length; index += 1) {
    const old = recorded[index];
    const now = actual[index];
    if (old && now && canonicalJson(old) === canonicalJson(now)) continue;
    const position = `#${index + 1}`;
    if (!now && old) {
      return `input messages differ: the graph sent ${actual.length}, the recording holds ${recorded.length}; missing ${position}: ${describe(old)}`;
    }
    if (now && !old) {
      return `input messages differ: the graph sent ${actual.length}, the recording holds ${recorded.length}; extra ${position}: ${describe(now)}`;
    }
    if (!old || !now) continue;
    return `input message ${position} (${kind(now)}) differs:\n${messageDiff(old, now)}`;
  }
  return undefined;
}

function messageDiff(old: RecordedMessage, now: RecordedMessage): string {
  if (old.role !== now.role || (old.name ?? "") !== (now.name ?? "")) {
    return sides(describe(old), describe(now));
  }
  const lines: string[] = [];
  if (old.text !== now.text) lines.push(textDiff(old.text, now.text));
  const calls = (message: RecordedMessage) => canonicalJson(message.tool_calls ?? []);
  if (calls(old) !== calls(now)) {
    lines.push(sides(`tool calls ${clip(calls(old))}`, `tool calls ${clip(calls(now))}`));
  }
  if (Boolean(old.error) !== Boolean(now.error)) {
    lines.push(sides(old.error ? "an error" : "a result", now.error ? "an error" : "a result"));
  }
  return lines.join("\n");
}

function kind(message: RecordedMessage): string {
  return message.role === "tool" ? `tool ${JSON.stringify(message.name ?? "")}` : message.role;
}

function describe(message: RecordedMessage): string {
  const calls = message.tool_calls?.length
    ? ` calling ${message.tool_calls.map((call) => call.name).join(", ")}`
    : "";
  return `${kind(message)} ${JSON.stringify(clip(message.text))}${calls}`;
}

function sides(old: string, now: string): string {
  return `  - ${old}\n  + ${now}`;
}

/**
 * A short line diff: the lines between the common head and the common tail, the recording's
 * marked `-` and the new ones `+`, at most {@link MAX_DIFF_LINES} of each, each clipped around
 * its first difference.
 */
export function textDiff(old: string, now: string): string {
  const a = old.split("\n");
  const b = now.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail += 1;
  }
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const at = firstDifference(removed[0] ?? "", added[0] ?? "");
  const show = (sign: string, lines: string[]) => [
    ...lines
      .slice(0, MAX_DIFF_LINES)
      .map((line, index) => `  ${sign} ${JSON.stringify(clip(line, index === 0 ? at : 0))}`),
    ...(lines.length > MAX_DIFF_LINES
      ? [`  ${sign} … ${lines.length - MAX_DIFF_LINES} more line(s)`]
      : []),
  ];
  const where = head > 0 ? [`  (from line ${head + 1})`] : [];
  return [...where, ...show("-", removed), ...show("+", added)].join("\n");
}

function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index += 1;
  return index;
}

/** `text` cut to {@link MAX_LINE_CHARS}, keeping the part from a little before `at`. */
function clip(text: string, at = 0): string {
  if (text.length <= MAX_LINE_CHARS) return text;
  const start = Math.max(0, Math.min(at - 40, text.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
