import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { KbFileRecord, KbUploadResult, KnowledgeBaseRecord } from "../../runtime.js";
import type { CallResult, HttpServer } from "../support/http-server.js";

/** Files made for these tests (`notes.pdf`: one page, two lines; `report.docx`: two paragraphs). */
export function fixture(name: string): Buffer {
  return readFileSync(join(import.meta.dirname, "../fixtures/knowledge", name));
}

/** A file to upload: a name and its bytes. */
export type UploadFile = [name: string, content: string | Uint8Array];

/** Uploads files over HTTP as multipart, each in a part named "file". */
export async function upload(
  http: HttpServer,
  token: string,
  kb: string,
  files: readonly UploadFile[],
): Promise<CallResult<{ files: KbUploadResult[] }>> {
  const form = new FormData();
  for (const [name, content] of files) {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    form.append("file", new Blob([bytes]), name);
  }
  const response = await fetch(`${http.base}/api/kb/${encodeURIComponent(kb)}/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await response.text();
  const isJson = (response.headers.get("content-type") ?? "").includes("application/json");
  return {
    status: response.status,
    body: (isJson && text !== "" ? JSON.parse(text) : text) as { files: KbUploadResult[] },
    headers: response.headers,
  };
}

/** Creates a knowledge base over HTTP, expecting 201. */
export async function createKb(
  http: HttpServer,
  token: string,
  payload: Record<string, unknown>,
): Promise<KnowledgeBaseRecord> {
  const created = await http.call<KnowledgeBaseRecord>("POST", "/api/kb", { token, body: payload });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** Polls a knowledge base's file list until no file is queued or indexing; returns it. */
export async function settledFiles(
  http: HttpServer,
  token: string,
  kb: string,
  limitMs = 20_000,
): Promise<KbFileRecord[]> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const listed = await http.call<{ files: KbFileRecord[] }>(
      "GET",
      `/api/kb/${encodeURIComponent(kb)}/files`,
      { token },
    );
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const files = listed.body.files;
    if (files.every((file) => file.status === "indexed" || file.status === "error")) return files;
    if (Date.now() > deadline) throw new Error(`files still pending: ${JSON.stringify(files)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
