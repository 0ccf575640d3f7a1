import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import {
  type AgentFormValues,
  type AgentRecord,
  type AllByDefaultList,
  agentPayload,
  formFieldOf,
  formValues,
  LIMIT_FIELDS,
  type LimitField,
} from "../agent-form-model.js";
import { type Api, ApiError, type Catalog } from "../api.js";
import { useFirstFocus } from "./use-first-focus.js";

const LIMIT_LABELS: Record<LimitField, string> = {
  max_rounds: "Max rounds",
  max_result_chars: "Max result characters",
  max_parallel_subagents: "Max parallel subagents",
  subagent_timeout_ms: "Subagent timeout (ms)",
};

/** The built-in subagent every chat agent may be allowed to call. */
const GENERAL_PURPOSE = { slug: "general-purpose", name: "general-purpose" };

/** The form's free-text fields. */
type TextFieldName =
  | "slug"
  | "name"
  | "description"
  | "system_prompt"
  | "share_uids"
  | "share_editors";

/** An API error shown next to the field it names, or at the top of the form. */
interface FormError {
  field: string | undefined;
  apiField: string | undefined;
  message: string;
}

/**
 * One form for chat agents and subagents: identity, sharing, runtime config. The "Subagents"
 * choice exists only for chat agents (a subagent calls none) and lists only the subagents the
 * user may see. Validation is the server's: its error is shown next to the field it names.
 */
export function AgentForm(props: {
  api: Api;
  agent: AgentRecord | undefined;
  subagents: AgentRecord[];
  onDone: (saved: boolean) => void;
}) {
  const { api, agent } = props;
  const [values, setValues] = useState<AgentFormValues>(() => formValues(agent));
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  const [error, setError] = useState<FormError | undefined>();
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    api
      .catalog()
      .then(setCatalog, (caught: Error) =>
        setError({ field: undefined, apiField: undefined, message: caught.message }),
      );
  }, [api]);

  const form = useRef<HTMLFormElement>(null);
  // Opened from the bottom of a long list, the form (at the top) would be off-screen.
  useFirstFocus(form, "select, input, textarea", { scroll: true });
  // An error is brought into view with its field focused, wherever it is in the form.
  useEffect(() => {
    if (!error || !form.current) return;
    const shown =
      (error.field &&
        form.current.querySelector<HTMLElement>(`[data-error-for="${error.field}"]`)) ||
      form.current.querySelector<HTMLElement>('[role="alert"]');
    shown?.scrollIntoView?.({ block: "center" });
    const input = error.field ? form.current.querySelector<HTMLElement>(`#${error.field}`) : null;
    input?.focus({ preventScroll: true });
  }, [error]);

  const set = <K extends keyof AgentFormValues>(key: K, value: AgentFormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));
  const text = (event: Event) => (event.target as HTMLInputElement).value;

  const save = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      const payload = agentPayload(values, agent);
      if (agent) await api.updateAgent(agent.id, payload);
      else await api.createAgent(payload);
      props.onDone(true);
    } catch (caught) {
      const apiField = caught instanceof ApiError ? caught.field : undefined;
      setError({ field: formFieldOf(apiField), apiField, message: (caught as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const errorFor = (field: string) => (error?.field === field ? error : undefined);
  const describedBy = (field: string) => (errorFor(field) ? `error-${field}` : undefined);
  const fieldError = (field: string) => {
    const shown = errorFor(field);
    return shown ? (
      <p
        id={`error-${field}`}
        class="field-error"
        data-error-for={field}
        data-api-field={shown.apiField}
      >
        {shown.message}
      </p>
    ) : null;
  };
  const knownFields = new Set([
    "backend_id",
    "slug",
    "name",
    "description",
    "share_mode",
    "share_uids",
    "share_editors",
    "is_default",
    "system_prompt",
    "model",
    "tools",
    "skills",
    "mcp_servers",
    "knowledge_bases",
    "subagents",
    ...LIMIT_FIELDS,
  ]);
  const generalError = error && (!error.field || !knownFields.has(error.field)) ? error : undefined;
  /** A text field of the form: label, input (or textarea with `rows`), and its API error. */
  const textField = (
    field: TextFieldName,
    label: string,
    extra: { rows?: number; placeholder?: string; list?: string; required?: boolean } = {},
  ) => {
    const common = {
      id: field,
      value: values[field],
      placeholder: extra.placeholder,
      "aria-invalid": errorFor(field) ? ("true" as const) : undefined,
      "aria-describedby": describedBy(field),
      onInput: (event: Event) => set(field, text(event)),
    };
    return (
      <Field id={field} label={label} error={fieldError(field)}>
        {extra.rows ? (
          <textarea rows={extra.rows} {...common} />
        ) : (
          <input list={extra.list} required={extra.required} {...common} />
        )}
      </Field>
    );
  };
  const isChatAgent = values.backend_id === "ChatAgentBackend";
  const subagentChoices = [
    GENERAL_PURPOSE,
    ...props.subagents.filter((candidate) => candidate.id !== agent?.id),
  ];

  return (
    <form ref={form} class="agent-form" aria-label="Agent form" onSubmit={save} noValidate>
      <h2>{agent ? `Edit ${agent.name}` : "New agent"}</h2>
      {generalError && (
        <p role="alert" class="error">
          {generalError.message}
        </p>
      )}
      <div class="grid">
        <Field id="backend_id" label="Backend" error={fieldError("backend_id")}>
          <select
            id="backend_id"
            value={values.backend_id}
            disabled={agent !== undefined}
            aria-describedby={describedBy("backend_id")}
            onChange={(event) => set("backend_id", text(event) as AgentFormValues["backend_id"])}
          >
            <option value="ChatAgentBackend">Chat agent</option>
            <option value="SubAgentBackend">Subagent</option>
          </select>
        </Field>
        {textField("slug", "Slug", { required: true })}
        {textField("name", "Name", { required: true })}
        <ModelField
          value={values.model}
          catalog={catalog}
          error={fieldError("model")}
          invalid={errorFor("model") !== undefined}
          onChange={(model) => set("model", model)}
        />
      </div>
      {textField("description", "Description", { rows: 2 })}
      {textField("system_prompt", "System prompt", { rows: 4 })}
      <div class="grid">
        <Field id="share_mode" label="Sharing" error={fieldError("share_mode")}>
          <select
            id="share_mode"
            value={values.share_mode}
            onChange={(event) => set("share_mode", text(event) as AgentFormValues["share_mode"])}
          >
            <option value="private">private (only me)</option>
            <option value="users">users (the ones listed)</option>
            <option value="public">public (everyone)</option>
          </select>
        </Field>
        {textField("share_uids", "Shared with", { placeholder: "user ids, comma-separated" })}
        {textField("share_editors", "Editors", { placeholder: "user ids, comma-separated" })}
        {isChatAgent && (
          <div class="field checkbox">
            <input
              id="is_default"
              type="checkbox"
              checked={values.is_default}
              aria-describedby={describedBy("is_default")}
              onChange={(event) => set("is_default", (event.target as HTMLInputElement).checked)}
            />
            <label for="is_default">Default agent</label>
            {fieldError("is_default")}
          </div>
        )}
      </div>
      <div class="grid">
        <ChoiceList
          legend="Tools"
          list="tools"
          items={catalog?.tools.map((tool) => ({ name: tool.name, title: tool.description }))}
          values={values}
          onChange={set}
          error={fieldError("tools")}
        />
        <ChoiceList
          legend="Skills"
          list="skills"
          items={catalog?.skills.map((skill) => ({ name: skill.name, title: skill.description }))}
          values={values}
          onChange={set}
          error={fieldError("skills")}
        />
        <ChoiceList
          legend="MCP servers"
          list="mcp_servers"
          items={catalog?.mcp_servers.map((name) => ({ name, title: name }))}
          values={values}
          onChange={set}
          error={fieldError("mcp_servers")}
        />
        <ChoiceList
          legend="Knowledge bases"
          list="knowledge_bases"
          items={catalog?.knowledge_bases.map((kb) => ({
            name: kb.name,
            title: kb.description || kb.name,
          }))}
          values={values}
          onChange={set}
          error={fieldError("knowledge_bases")}
        />
        {isChatAgent && (
          <fieldset>
            <legend>Subagents</legend>
            {subagentChoices.map((choice) => {
              const id = `subagent-${choice.slug}`;
              return (
                <div class="checkbox" key={choice.slug}>
                  <input
                    id={id}
                    type="checkbox"
                    checked={values.subagents.includes(choice.slug)}
                    onChange={(event) => {
                      const checked = (event.target as HTMLInputElement).checked;
                      set(
                        "subagents",
                        checked
                          ? [...values.subagents, choice.slug]
                          : values.subagents.filter((slug) => slug !== choice.slug),
                      );
                    }}
                  />
                  <label for={id}>{choice.name}</label>
                </div>
              );
            })}
            {values.subagents.length === 0 && (
              <p class="hint">None ticked: this agent delegates to no one.</p>
            )}
            {fieldError("subagents")}
          </fieldset>
        )}
      </div>
      <div class="grid">
        {LIMIT_FIELDS.map((field) => (
          <Field key={field} id={field} label={LIMIT_LABELS[field]} error={fieldError(field)}>
            <input
              id={field}
              type="number"
              min={1}
              step={1}
              value={values.limits[field]}
              placeholder="default"
              aria-invalid={errorFor(field) ? "true" : undefined}
              aria-describedby={describedBy(field)}
              onInput={(event) => set("limits", { ...values.limits, [field]: text(event) })}
            />
          </Field>
        ))}
      </div>
      <div class="form-actions">
        <button type="submit" disabled={saving}>
          {saving ? "Saving…" : "Save"}
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Field(props: {
  id: string;
  label: string;
  error: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.error}
    </div>
  );
}

/**
 * A default-all list: "Use all (default)" leaves it out of the config (every current and future
 * item); unticking it starts an explicit list holding every item, to untick from.
 */
function ChoiceList(props: {
  legend: string;
  list: AllByDefaultList;
  items: { name: string; title: string }[] | undefined;
  values: AgentFormValues;
  onChange: (key: AllByDefaultList, value: string[] | null) => void;
  error: ComponentChildren;
}) {
  const chosen = props.values[props.list];
  const names = [...new Set([...(props.items ?? []).map((item) => item.name), ...(chosen ?? [])])];
  const titles = new Map((props.items ?? []).map((item) => [item.name, item.title]));
  const allId = `${props.list}-all`;
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <div class="checkbox">
        <input
          id={allId}
          type="checkbox"
          checked={chosen === null}
          onChange={(event) =>
            props.onChange(props.list, (event.target as HTMLInputElement).checked ? null : names)
          }
        />
        <label for={allId}>Use all (default)</label>
      </div>
      {props.items === undefined && <p class="hint">Loading…</p>}
      {props.items !== undefined && names.length === 0 && <p class="hint">None available.</p>}
      {names.map((name) => {
        const id = `${props.list}-${name}`;
        return (
          <div class="checkbox" key={name}>
            <input
              id={id}
              type="checkbox"
              disabled={chosen === null}
              checked={chosen === null || chosen.includes(name)}
              onChange={(event) => {
                const current = chosen ?? [];
                props.onChange(
                  props.list,
                  (event.target as HTMLInputElement).checked
                    ? [...current, name]
                    : current.filter((item) => item !== name),
                );
              }}
            />
            <label for={id} title={titles.get(name)}>
              {name}
            </label>
          </div>
        );
      })}
      {props.error}
    </fieldset>
  );
}

/** The choice that reveals a free-text model spec (an `openai:<name>` the catalog does not list). */
const OTHER_MODEL = "__other__";

/**
 * The model, picked from the catalog's list ("Default" leaves it unset), or typed under "Other"
 * for a spec the list does not hold. The server checks either when the agent is saved.
 */
function ModelField(props: {
  value: string;
  catalog: Catalog | undefined;
  error: ComponentChildren;
  invalid: boolean;
  onChange: (model: string) => void;
}) {
  const listed = props.catalog?.models ?? [];
  const [other, setOther] = useState(
    () => props.value !== "" && props.catalog !== undefined && !listed.includes(props.value),
  );
  // A stored spec the catalog does not list (read once the catalog has come) is shown as typed.
  const typed =
    other || (props.value !== "" && props.catalog !== undefined && !listed.includes(props.value));
  return (
    <div class="field">
      <label for="model">Model</label>
      <select
        id="model"
        value={typed ? OTHER_MODEL : props.value}
        aria-invalid={props.invalid && !typed ? "true" : undefined}
        aria-describedby={props.invalid ? "error-model" : undefined}
        onChange={(event) => {
          const chosen = (event.target as HTMLSelectElement).value;
          setOther(chosen === OTHER_MODEL);
          if (chosen !== OTHER_MODEL) props.onChange(chosen);
        }}
      >
        <option value="">Default{props.catalog ? ` (${props.catalog.default_model})` : ""}</option>
        {listed.map((model) => (
          <option key={model} value={model}>
            {model}
          </option>
        ))}
        <option value={OTHER_MODEL}>Other…</option>
      </select>
      {typed && (
        <>
          <label for="model-spec" class="sub-label">
            Model spec
          </label>
          <input
            id="model-spec"
            value={props.value}
            placeholder="openai:<model name>"
            aria-invalid={props.invalid ? "true" : undefined}
            aria-describedby={props.invalid ? "error-model" : undefined}
            onInput={(event) => props.onChange((event.target as HTMLInputElement).value)}
          />
        </>
      )}
      {props.error}
    </div>
  );
}
