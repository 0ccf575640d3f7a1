import { useCallback, useEffect, useState } from "preact/hooks";
import type { AgentRecord } from "../agent-form-model.js";
import { type Api, ApiError } from "../api.js";
import { AgentForm } from "../components/agent-form.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";

/**
 * Every agent the user may see, subagents marked, with one form to create or edit either kind.
 */
export function AgentsPage(props: { api: Api }) {
  const { api } = props;
  const [agents, setAgents] = useState<AgentRecord[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [editing, setEditing] = useState<AgentRecord | "new" | undefined>();
  const [deleting, setDeleting] = useState<
    { agent: AgentRecord; users: AgentRecord[]; serverReason?: string } | undefined
  >();

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

  /**
   * Deletes after one question. A subagent that chat agents list is detached from them in the
   * same request (`detach`): the question names them, so there is nothing left to ask.
   */
  const remove = async (agent: AgentRecord, detach: boolean) => {
    setDeleting(undefined);
    try {
      await api.deleteAgent(agent.id, detach);
    } catch (caught) {
      // Listed by agents this user cannot see: the server's answer says so; ask once, with it.
      if (!detach && caught instanceof ApiError && caught.code === "AGENT_IN_USE") {
        setDeleting({ agent, users: [], serverReason: caught.message });
        return;
      }
      setError(`Cannot delete "${agent.name}": ${(caught as Error).message}`);
      return;
    }
    await load();
  };

  /** The chat agents (visible to this user) that list `agent` as a subagent. */
  const usersOf = (agent: AgentRecord) =>
    (agents ?? []).filter(
      (candidate) =>
        !candidate.is_subagent &&
        (candidate.config_json.context.subagents ?? []).includes(agent.slug),
    );

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
                    onClick={() => setDeleting({ agent, users: usersOf(agent) })}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete "${deleting.agent.name}"?`}
          confirmLabel={
            deleting.users.length > 0 || deleting.serverReason ? "Remove and delete" : "Delete"
          }
          onConfirm={() =>
            void remove(
              deleting.agent,
              deleting.users.length > 0 || deleting.serverReason !== undefined,
            )
          }
          onCancel={() => setDeleting(undefined)}
        >
          {deleting.users.length > 0 ? (
            <p>
              {deleting.users.map((user) => user.name).join(", ")}{" "}
              {deleting.users.length === 1 ? "calls" : "call"} it as a subagent: it will be removed
              from {deleting.users.length === 1 ? "that agent's" : "their"} subagents, then deleted.
            </p>
          ) : deleting.serverReason ? (
            <p>
              Other agents call it as a subagent: it will be removed from their subagents, then
              deleted.
            </p>
          ) : (
            <p>It will be deleted for everyone it is shared with. This cannot be undone.</p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}
