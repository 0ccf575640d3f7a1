/**
 * Who may see and who may change an agent (README.md "Configuration", `share_config`).
 *
 * Editors may always see what they may change, whatever the share mode.
 */

import type { AgentRecord } from "./schema.js";

/** The part of a record the rights depend on. */
export type AgentAccessFacts = Pick<AgentRecord, "owner_uid" | "share_config">;

/** True when `uid` may see (and run) the agent. */
export function canView(record: AgentAccessFacts, uid: string): boolean {
  const share = record.share_config;
  return (
    record.owner_uid === uid ||
    share.mode === "public" ||
    (share.mode === "users" && share.uids.includes(uid)) ||
    share.editors.includes(uid)
  );
}

/** True when `uid` may update or delete the agent: its owner or one of its editors. */
export function canEdit(record: AgentAccessFacts, uid: string): boolean {
  return record.owner_uid === uid || record.share_config.editors.includes(uid);
}
