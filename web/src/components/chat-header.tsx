import type { AgentRecord } from "../agent-form-model.js";

/**
 * The head of a conversation: the agent it talks to (fixed while a run goes on; a thread's agent
 * that is gone is named as such), that agent's description, and the Branches button.
 */
export function ChatHeader(props: {
  /** The agents one may chat with; undefined while they load. */
  agents: AgentRecord[] | undefined;
  agentId: string | undefined;
  /** The conversation's agent no longer exists (or is no longer shared). */
  agentMissing: boolean;
  /** A run goes on in this conversation. */
  busy: boolean;
  /** The conversation has messages, so it has branches to show. */
  branches: boolean;
  onChoose: (agentId: string) => void;
  onBranches: () => void;
}) {
  const { agents, agentId, agentMissing, busy } = props;
  const chosen = agents?.find((agent) => agent.id === agentId);
  return (
    <div class="field inline agent-picker">
      <label for="agent">Agent</label>
      <select
        id="agent"
        value={agentMissing ? "" : (agentId ?? "")}
        disabled={busy}
        onChange={(event) => props.onChoose((event.target as HTMLSelectElement).value)}
      >
        {agents === undefined && <option value="">Loading…</option>}
        {agents?.length === 0 && <option value="">No chat agents</option>}
        {agentMissing && <option value="">(deleted agent: choose another)</option>}
        {agents?.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.name}
          </option>
        ))}
      </select>
      {chosen?.description && <span class="muted agent-description">{chosen.description}</span>}
      {props.branches && (
        <button
          type="button"
          class="secondary branches-button"
          disabled={busy}
          onClick={props.onBranches}
        >
          Branches
        </button>
      )}
    </div>
  );
}
