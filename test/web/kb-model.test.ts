import { describe, expect, it } from "vitest";
import {
  embedderChange,
  embedderChangeWarning,
  embedderFormValues,
  embedderPayload,
  vectorSummary,
} from "../../web/src/kb-embedder-model.js";
import {
  EMPTY_KB_FORM,
  formatScore,
  ingestSummary,
  isIngesting,
  type KbFileRecord,
  type KnowledgeBaseRecord,
  kbFormFieldOf,
  kbFormValues,
  kbPayload,
  lineSpan,
  uploadReport,
} from "../../web/src/kb-model.js";

function file(name: string, status: KbFileRecord["status"]): KbFileRecord {
  return {
    id: `id-${name}`,
    kb_id: "kb-1",
    name,
    content_hash: "0".repeat(64),
    bytes: 10,
    format: "md",
    status,
    error: status === "error" ? `file "${name}" cannot be read` : null,
    chunk_count: status === "indexed" ? 1 : 0,
    line_count: status === "indexed" ? 3 : 0,
    vectors: "none",
    vectors_error: null,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
  };
}

describe("the knowledge base page's model", () => {
  it("builds the create payload with the agents' sharing shape", () => {
    expect(
      kbPayload({
        ...EMPTY_KB_FORM,
        name: "  handbook ",
        description: "rules",
        share_mode: "users",
        share_uids: "bob, carol,,",
        share_editors: " bob",
      }),
    ).toEqual({
      name: "handbook",
      description: "rules",
      share_config: { mode: "users", uids: ["bob", "carol"], editors: ["bob"] },
    });
    expect(kbPayload(EMPTY_KB_FORM).share_config).toEqual({
      mode: "private",
      uids: [],
      editors: [],
    });
  });

  it("edits a stored knowledge base with the version it read", () => {
    const stored: KnowledgeBaseRecord = {
      id: "kb-1",
      name: "handbook",
      description: "rules",
      owner_uid: "alice",
      share_config: { mode: "users", uids: ["bob", "carol"], editors: ["bob"] },
      embedder: {},
      version: 3,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    };
    const values = kbFormValues(stored);
    expect(values).toEqual({
      name: "handbook",
      description: "rules",
      share_mode: "users",
      share_uids: "bob, carol",
      share_editors: "bob",
      embedder_on: false,
      embedder_model: "",
      embedder_dimensions: "",
      embedder_base_url: "",
      embedder_api_key_env: "",
    });
    expect(kbPayload(values, stored)).toEqual({
      name: "handbook",
      description: "rules",
      share_config: stored.share_config,
      expected_version: 3,
    });
    expect(kbFormValues()).toEqual(EMPTY_KB_FORM);
  });

  it("polls while a file is queued or indexing, and stops when none is", () => {
    expect(isIngesting([])).toBe(false);
    expect(isIngesting([file("a.md", "queued")])).toBe(true);
    expect(isIngesting([file("a.md", "indexed"), file("b.pdf", "indexing")])).toBe(true);
    expect(isIngesting([file("a.md", "indexed"), file("b.pdf", "error")])).toBe(false);
  });

  it("sends the embedder as typed, only when it changed, and says what a change does", () => {
    const settings = { model: "hash-16", dimensions: 16, base_url: "http://127.0.0.1:9/v1" };
    const stored: KnowledgeBaseRecord = {
      id: "kb-1",
      name: "papers",
      description: "",
      owner_uid: "alice",
      share_config: { mode: "private", uids: [], editors: [] },
      embedder: settings,
      version: 2,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    };
    const values = kbFormValues(stored);
    expect(values).toMatchObject({ embedder_on: true, embedder_dimensions: "16" });
    // Unchanged: an edit of the description leaves the vectors alone.
    expect(kbPayload({ ...values, description: "new" }, stored)).not.toHaveProperty("embedder");
    expect(kbPayload({ ...values, embedder_dimensions: " 32 " }, stored).embedder).toEqual({
      ...settings,
      dimensions: 32,
    });
    // Not a number: sent as typed, for the server's message to name the field.
    expect(embedderPayload({ ...values, embedder_dimensions: "many" }).dimensions).toBe("many");
    expect(embedderPayload({ ...values, embedder_dimensions: "" })).not.toHaveProperty(
      "dimensions",
    );
    expect(kbPayload({ ...values, embedder_on: false }, stored).embedder).toEqual({});
    expect(kbPayload({ ...EMPTY_KB_FORM, name: "n" })).not.toHaveProperty("embedder");
    expect(
      kbPayload({ ...EMPTY_KB_FORM, ...embedderFormValues(settings), name: "n" }).embedder,
    ).toEqual(settings);

    expect(embedderChange(settings, { ...settings })).toBe("none");
    expect(embedderChange(settings, { ...settings, api_key_env: "KEY" })).toBe("key");
    expect(embedderChange(settings, { ...settings, base_url: "http://other/v1" })).toBe("reindex");
    expect(embedderChange({}, settings)).toBe("reindex");
    expect(embedderChange(settings, {})).toBe("drop");
    expect(embedderChange({}, {})).toBe("none");
    expect(embedderChangeWarning("reindex", 2)).toContain("Saving reindexes its 2 files");
    expect(embedderChangeWarning("drop", 1)).toContain("Saving drops the vectors of its file");
    expect(embedderChangeWarning("reindex", 0)).toBeUndefined();
    expect(embedderChangeWarning("key", 3)).toBeUndefined();

    expect(kbFormFieldOf("embedder.dimensions")).toBe("embedder_dimensions");
    expect(kbFormFieldOf("embedder.base_url")).toBe("embedder_base_url");
    expect(kbFormFieldOf("share_config.uids")).toBe("share_uids");
  });

  it("follows the vectors of a reindex: polls while pending or embedding, counts them", () => {
    const vectors = (name: string, state: KbFileRecord["vectors"]) => ({
      ...file(name, "indexed"),
      vectors: state,
    });
    expect(isIngesting([vectors("a.md", "pending")])).toBe(true);
    expect(isIngesting([vectors("a.md", "ready"), vectors("b.md", "embedding")])).toBe(true);
    expect(isIngesting([vectors("a.md", "ready"), vectors("b.md", "error")])).toBe(false);
    expect(vectorSummary([file("a.md", "indexed")])).toBe("");
    expect(
      vectorSummary([vectors("a.md", "ready"), vectors("b.md", "pending"), vectors("c", "ready")]),
    ).toBe("Vectors: 1 pending, 2 ready.");
  });

  it("sums up the files' progress in one line, each status counted", () => {
    expect(ingestSummary([])).toBe("No files yet: add some above.");
    expect(ingestSummary([file("a.md", "queued"), file("b.pdf", "indexing")])).toBe(
      "2 files: 1 queued, 1 indexing.",
    );
    expect(
      ingestSummary([file("a.md", "error"), file("b.pdf", "indexed"), file("c.txt", "indexed")]),
    ).toBe("3 files: 2 indexed, 1 error.");
    expect(ingestSummary([file("a.md", "indexed")])).toBe("1 file: 1 indexed.");
  });

  it("reports the refused files and the duplicates of an accepted upload", () => {
    expect(
      uploadReport([
        { name: "a.md", status: "accepted", duplicate: false, file: file("a.md", "queued") },
        { name: "b.md", status: "accepted", duplicate: true, file: file("b.md", "indexed") },
        {
          name: "c.bat",
          status: "rejected",
          error: { code: "UNSUPPORTED_FILE_TYPE", message: 'file "c.bat" has type ".bat"' },
        },
      ]),
    ).toEqual({
      rejected: [{ name: "c.bat", message: 'file "c.bat" has type ".bat"' }],
      duplicates: ["b.md"],
    });
  });

  it("shows a score with three significant digits, however small", () => {
    expect(formatScore(12.3456)).toBe("12.3");
    expect(formatScore(0.000001234)).toBe("0.00000123");
    expect(formatScore(0)).toBe("0");
  });

  it("names a hit's place by its line or its lines", () => {
    expect(lineSpan({ line_start: 6, line_end: 6 })).toBe("line 6");
    expect(lineSpan({ line_start: 3, line_end: 9 })).toBe("lines 3-9");
  });
});
