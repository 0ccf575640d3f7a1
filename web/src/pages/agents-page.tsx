import { useCallback, useEffect, useState } from "preact/hooks";
import type { AgentRecord } from "../agent-form-model.js";
import { type Api, ApiError } from "../api.js";
import { AgentForm } from "../components/agent-form.js";

/**
 * Every agent the user may see, subagents marked, with one form to create or edit either kind.
 */
export function AgentsPage(props: { api: Api }) {
  const { api } = props;
  const [agents, setAgents] = useState<AgentRecord[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [editing, setEditing] = useState<AgentRecord | "new" | undefined>();

  const load = useCallback(async () => {
    try {
      setAgents(await api.listAgents(true));
      setError(undefined);
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (agent: AgentRecord) => {
    if (!confirm(`Delete the agent "${agent.name}"?`)) return;
    try {
      await api.deleteAgent(agent.id, false);
    } catch (caught) {
      if (!(caught instanceof ApiError && caught.code === "AGENT_IN_USE")) {
        setError(`Cannot delete "${agent.name}": ${(caught as Error).message}`);
        return;
      }
      if (!confirm(`${caught.message}\n\nRemove it from those agents' subagents and delete it?`)) {
        return;
      }
      try {
        await api.deleteAgent(agent.id, true);
      } catch (again) {
        setError(`Cannot delete "${agent.name}": ${(again as Error).message}`);
        return;
      }
    }
    await load();
  };

  const subagents = (agents ?? []).filter((agent) => agent.is_subagent);
  return (
    <section class="page">
      <div class="page-head">
        <h1>Agents</h1>
        <button type="button" onClick={() => setEditing("new")}>
          New agent
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {editing !== undefined && (
        <AgentForm
          api={api}
          agent={editing === "new" ? undefined : editing}
          subagents={subagents}
          onDone={async (saved) => {
            setEditing(undefined);
            if (saved) await load();
          }}
        />
      )}
      {agents === undefined ? (
        <p aria-busy="true">Loading agents…</p>
      ) : agents.length === 0 ? (
        <p>No agents yet: create one with "New agent".</p>
      ) : (
        <table class="agents">
          <caption class="visually-hidden">Your agents and subagents</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Kind</th>
              <th scope="col">Subagents it may call</th>
              <th scope="col">Sharing</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {agents.map((agent) => (
              <tr key={agent.id} data-agent-slug={agent.slug}>
                <td>
                  <strong>{agent.name}</strong>
                  {agent.is_default && <span class="badge">Default</span>}
                  {agent.description && <div class="muted">{agent.description}</div>}
                </td>
                <td data-label="Slug">
                  <code>{agent.slug}</code>
                </td>
                <td data-label="Kind">
                  {agent.is_subagent ? (
                    <span class="badge subagent">Subagent</span>
                  ) : (
                    <span class="badge">Chat agent</span>
                  )}
                </td>
                <td data-label="Subagents">
                  {agent.is_subagent
                    ? "—"
                    : (agent.config_json.context.subagents ?? []).join(", ") || "none"}
                </td>
                <td data-label="Sharing">
                  {agent.share_config.mode}
                  <div class="muted">owner: {agent.owner_uid}</div>
                </td>
                <td class="actions">
                  <button
                    type="button"
                    aria-label={`Edit ${agent.name}`}
                    onClick={() => setEditing(agent)}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Delete ${agent.name}`}
                    onClick={() => void remove(agent)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
