import { describe, expect, it } from "vitest";
import { type AgentAccessFacts, canEdit, canView } from "../../agents/permissions.js";
import type { ShareConfig } from "../../agents/schema.js";

function agent(share: Partial<ShareConfig>): AgentAccessFacts {
  return { owner_uid: "alice", share_config: { mode: "private", uids: [], editors: [], ...share } };
}

describe("canView / canEdit", () => {
  it("lets the owner see and edit whatever the mode", () => {
    for (const mode of ["private", "users", "public"] as const) {
      expect(canView(agent({ mode }), "alice")).toBe(true);
      expect(canEdit(agent({ mode }), "alice")).toBe(true);
    }
  });

  it("hides a private agent from everyone else", () => {
    expect(canView(agent({ uids: ["bob"] }), "bob")).toBe(false);
    expect(canEdit(agent({}), "bob")).toBe(false);
  });

  it("shows a users-mode agent only to the listed users, read-only", () => {
    const shared = agent({ mode: "users", uids: ["bob"] });
    expect(canView(shared, "bob")).toBe(true);
    expect(canEdit(shared, "bob")).toBe(false);
    expect(canView(shared, "carol")).toBe(false);
  });

  it("shows a public agent to everyone, read-only", () => {
    expect(canView(agent({ mode: "public" }), "anyone")).toBe(true);
    expect(canEdit(agent({ mode: "public" }), "anyone")).toBe(false);
  });

  it("lets editors see and edit even a private agent", () => {
    const shared = agent({ editors: ["carol"] });
    expect(canView(shared, "carol")).toBe(true);
    expect(canEdit(shared, "carol")).toBe(true);
    expect(canView(shared, "bob")).toBe(false);
  });
});
