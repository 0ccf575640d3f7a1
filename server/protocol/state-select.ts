import { ErrorCode, SubagentGraphError } from "../../errors.js";

/**
 * `select` of a thread state read (`threads.getState`, `threads.getHistory`): the fields of the
 * API's `ThreadState` to answer with (the SDK's `ThreadStateSelectField`), where `values.<key>`
 * keeps one key of the values and `interrupts` lists the tasks' interrupts.
 */
export const STATE_FIELDS = [
  "values",
  "next",
  "tasks",
  "checkpoint",
  "metadata",
  "created_at",
  "parent_checkpoint",
  "interrupts",
] as const;

/** What a `select` keeps. */
export interface StateSelection {
  fields: ReadonlySet<string>;
  /** Keys of `values` to keep when `values` itself is not selected. */
  valueKeys: readonly string[];
}

/**
 * The selection `select` asks for (a query string may repeat the key, a body sends a list);
 * undefined keeps every field.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `select`) naming a field a thread state
 *   does not have
 */
export function stateSelection(select: string | string[] | undefined): StateSelection | undefined {
  if (select === undefined) return undefined;
  const names = Array.isArray(select) ? select : [select];
  const fields = new Set<string>();
  const valueKeys: string[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    if (name.startsWith("values.") && name.length > "values.".length) {
      valueKeys.push(name.slice("values.".length));
    } else if ((STATE_FIELDS as readonly string[]).includes(name)) fields.add(name);
    else unknown.push(name);
  }
  if (unknown.length > 0 || names.length === 0) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `select: ${unknown.length > 0 ? `${unknown.map((name) => JSON.stringify(name)).join(", ")} is not a field of a thread state` : "name at least one field"}: use some of ${STATE_FIELDS.join(", ")}, or values.<key> for one key of the values`,
      { field: "select" },
    );
  }
  return { fields, valueKeys };
}

/** A serialised thread state, as much of it as projection needs. */
interface StateShape {
  values: Record<string, unknown>;
  tasks: { interrupts?: unknown }[];
  [field: string]: unknown;
}

/** `state` with only the selected fields (all of them without a selection). */
export function projectState<State extends StateShape>(
  state: State,
  selection: StateSelection | undefined,
): Partial<State> & { interrupts?: unknown[] } {
  if (!selection) return state;
  const out: Record<string, unknown> = {};
  for (const field of STATE_FIELDS) {
    if (!selection.fields.has(field)) continue;
    out[field] =
      field === "interrupts"
        ? state.tasks.flatMap((task) => (Array.isArray(task.interrupts) ? task.interrupts : []))
        : state[field];
  }
  if (!selection.fields.has("values") && selection.valueKeys.length > 0) {
    out.values = Object.fromEntries(
      selection.valueKeys
        .filter((key) => Object.hasOwn(state.values, key))
        .map((key) => [key, state.values[key]]),
    );
  }
  return out as Partial<State> & { interrupts?: unknown[] };
}
