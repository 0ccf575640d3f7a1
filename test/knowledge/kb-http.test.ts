import { afterEach, describe, expect, it } from "vitest";
import type { KbSearchHit, KnowledgeBaseRecord } from "../../runtime.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { createKb, fixture, settledFiles, upload } from "./kb-client.js";

type Hits = { results: KbSearchHit[] };

/**
 * `/api/kb` over real HTTP on SQLite and PostgreSQL: ingest of every format, search in English
 * and Chinese, dedupe, hostile uploads as typed 4xx, and the agents' sharing rules.
 */
describe.each(["sqlite", "postgres"] as const)("/api/kb over HTTP on %s", (saver) => {
  let http: HttpServer | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  async function start(maxKnowledgeFileBytes?: number) {
    http = await startHttpServer({
      users: ["alice", "bob", "carol"],
      runtime: {
        saver,
        ...(maxKnowledgeFileBytes === undefined ? {} : { runtime: { maxKnowledgeFileBytes } }),
      },
    });
    return {
      http,
      alice: http.tokenOf("alice"),
      bob: http.tokenOf("bob"),
      carol: http.tokenOf("carol"),
    };
  }

  it("ingests txt, md, html, pdf and docx with their lines, and finds each by its words", async () => {
    const { http, alice } = await start();
    const kb = await createKb(http, alice, { name: "manuals", description: "how things work" });
    const accepted = await upload(http, alice, "manuals", [
      ["plain.txt", "intro\n\nThe compressor stalls above 40 degrees.\n"],
      ["guide.md", "# Guide\n\n## Lubrication\n\nGrease the bearings weekly.\n"],
      [
        "page.html",
        "<html><head><style>p{}</style><script>var hidden='ignored';</script></head><body><h1>Valves</h1><p>Open the &quot;bypass&quot; valve slowly.</p></body></html>",
      ],
      ["notes.pdf", fixture("notes.pdf")],
      ["report.docx", fixture("report.docx")],
    ]);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body.files.map((file) => file.status)).toEqual(Array(5).fill("accepted"));
    const files = await settledFiles(http, alice, kb.id);
    const states = files.map((file) => [file.name, file.format, file.status, file.error]);
    expect(states.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ["guide.md", "md", "indexed", null],
      ["notes.pdf", "pdf", "indexed", null],
      ["page.html", "html", "indexed", null],
      ["plain.txt", "txt", "indexed", null],
      ["report.docx", "docx", "indexed", null],
    ]);

    const find = async (query: string) => {
      const found = await http.call<Hits>("POST", "/api/kb/search", {
        token: alice,
        body: { query, top_k: 1 },
      });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      return found.body.results[0];
    };
    expect(await find("compressor stalls")).toMatchObject({
      kb: "manuals",
      file: "plain.txt",
      line_start: 1,
      line_end: 3,
    });
    expect((await find("bearings grease"))?.file).toBe("guide.md");
    const html = await find("bypass valve");
    expect(html?.file).toBe("page.html");
    expect(html?.text).toContain('Open the "bypass" valve slowly.');
    expect(html?.text).not.toContain("ignored");
    expect(await find("shock wave Mach")).toMatchObject({
      file: "notes.pdf",
      line_start: 1,
      line_end: 2,
    });
    expect((await find("turbine fatigue"))?.file).toBe("report.docx");
    // Narrowed to one file by name: only its chunks, whatever matches elsewhere.
    const inFile = async (file: string) =>
      (
        await http.call<Hits>("POST", "/api/kb/search", {
          token: alice,
          body: { query: "bearings compressor", file },
        })
      ).body.results.map((hit) => hit.file);
    expect(await inFile("guide.md")).toEqual(["guide.md"]);
    expect(await inFile("plain.txt")).toEqual(["plain.txt"]);
    expect(await inFile("absent.txt")).toEqual([]);
    // Stemming: "stalling" finds "stalls".
    expect((await find("stalling"))?.file).toBe("plain.txt");

    // A numbered window of lines, and where the next starts.
    const txt = files.find((file) => file.name === "plain.txt");
    const lines = await http.call<{ text: string; next_line: number | null; line_count: number }>(
      "GET",
      `/api/kb/manuals/files/${txt?.id}/lines?line=3&lines=1`,
      { token: alice },
    );
    expect(lines.status).toBe(200);
    expect(lines.body).toMatchObject({
      text: "3| The compressor stalls above 40 degrees.",
      next_line: null,
      line_count: 3,
    });
  });

  it("finds Chinese words inside unspaced Chinese text, and English beside it", async () => {
    const { http, alice } = await start();
    await createKb(http, alice, { name: "中文资料" });
    await upload(http, alice, "中文资料", [
      ["检索.md", "# 说明\n\n信息检索系统的评价方法很多。\n\n第二部分讲数据库索引。\n"],
      ["other.txt", "天气预报说明天下雨。\n"],
    ]);
    await settledFiles(http, alice, "中文资料");
    const search = async (query: string) =>
      (
        await http.call<Hits>("POST", "/api/kb/search", {
          token: alice,
          body: { query, kb: "中文资料" },
        })
      ).body.results;
    const found = await search("检索");
    expect(found.map((hit) => hit.file)).toEqual(["检索.md"]);
    expect(found[0]?.text).toContain("信息检索系统的评价方法很多。");
    expect((await search("数据库")).map((hit) => hit.file)).toEqual(["检索.md"]);
    expect((await search("天气")).map((hit) => hit.file)).toEqual(["other.txt"]);
    expect(await search("nothing-like-this")).toEqual([]);
  });

  it("treats a re-upload of the same bytes as the same file, whatever its name", async () => {
    const { http, alice } = await start();
    await createKb(http, alice, { name: "dedupe" });
    const first = await upload(http, alice, "dedupe", [["a.txt", "same words\n"]]);
    await settledFiles(http, alice, "dedupe");
    const again = await upload(http, alice, "dedupe", [["renamed.txt", "same words\n"]]);
    expect(again.status).toBe(202);
    const [result] = again.body.files;
    expect(result).toMatchObject({ status: "accepted", duplicate: true });
    const firstFile = first.body.files[0];
    expect(result?.status === "accepted" && firstFile?.status === "accepted").toBe(true);
    if (result?.status === "accepted" && firstFile?.status === "accepted") {
      expect(result.file.id).toBe(firstFile.file.id);
      expect(result.file.status).toBe("indexed");
    }
    const files = await settledFiles(http, alice, "dedupe");
    expect(files.map((file) => file.name)).toEqual(["a.txt"]);
  });

  it("refuses hostile uploads with typed 4xx and keeps the knowledge base working", async () => {
    const { http, alice } = await start(2048);
    await createKb(http, alice, { name: "robust" });
    expectError(
      await upload(http, alice, "robust", [["tool.exe", "MZ"]]),
      415,
      "UNSUPPORTED_FILE_TYPE",
    );
    expectError(
      await upload(http, alice, "robust", [["big.txt", "x".repeat(5000)]]),
      413,
      "TOO_LARGE",
    );
    const fake = expectError(
      await upload(http, alice, "robust", [["fake.pdf", "just text"]]),
      422,
      "FILE_PARSE_FAILED",
    );
    expect(fake.message).toContain("fake.pdf");
    expectError(
      await http.call("POST", "/api/kb/robust/files", { token: alice, body: { file: "x" } }),
      422,
      "VALIDATION_FAILED",
    );

    // A mixed upload: each file judged alone.
    const mixed = await upload(http, alice, "robust", [
      ["ok.txt", "a healthy file about pumps\n"],
      ["bad.docx", "PK\u0003\u0004 not really a zip archive"],
      ["broken.pdf", "%PDF-1.4\nthis is not a pdf body at all\n%%EOF"],
      ["virus.bat", "echo"],
    ]);
    expect(mixed.status).toBe(202);
    expect(mixed.body.files.map((file) => file.status)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "rejected",
    ]);
    const files = await settledFiles(http, alice, "robust");
    const byName = Object.fromEntries(files.map((file) => [file.name, file]));
    expect(byName["ok.txt"]?.status).toBe("indexed");
    for (const name of ["bad.docx", "broken.pdf"]) {
      expect(byName[name]?.status).toBe("error");
      expect(byName[name]?.error).toContain(`file "${name}" cannot be read`);
    }
    const hits = await http.call<Hits>("POST", "/api/kb/search", {
      token: alice,
      body: { query: "pumps", kb: "robust" },
    });
    expect(hits.body.results.map((hit) => hit.file)).toEqual(["ok.txt"]);
    expectError(
      await http.call("POST", "/api/kb/search", { token: alice, body: { query: "  " } }),
      422,
      "VALIDATION_FAILED",
    );
    expectError(
      await http.call("POST", "/api/kb/search", { token: alice, body: { query: "x", top_k: 0 } }),
      422,
      "VALIDATION_FAILED",
    );
  });

  it("applies the agents' sharing rules: private, users, editors, public", async () => {
    const { http, alice, bob, carol } = await start();
    const secret = await createKb(http, alice, { name: "secret" });
    await upload(http, alice, "secret", [["s.txt", "the launch code is tangerine\n"]]);
    await settledFiles(http, alice, secret.id);

    // Bob cannot see Alice's private knowledge base, by id or name, in any way.
    for (const path of [`/api/kb/${secret.id}`, "/api/kb/secret", `/api/kb/${secret.id}/files`]) {
      expectError(await http.call("GET", path, { token: bob }), 404, "NOT_FOUND");
    }
    expectError(await upload(http, bob, secret.id, [["x.txt", "x"]]), 404, "NOT_FOUND");
    expectError(
      await http.call("DELETE", `/api/kb/${secret.id}`, { token: bob }),
      404,
      "NOT_FOUND",
    );
    expectError(
      await http.call("POST", "/api/kb/search", {
        token: bob,
        body: { query: "tangerine", kb: secret.id },
      }),
      404,
      "NOT_FOUND",
    );
    const bobAll = await http.call<Hits>("POST", "/api/kb/search", {
      token: bob,
      body: { query: "tangerine" },
    });
    expect(bobAll.body.results).toEqual([]);
    expect(
      (await http.call<{ knowledge_bases: unknown[] }>("GET", "/api/kb", { token: bob })).body
        .knowledge_bases,
    ).toEqual([]);
    const catalog = await http.call<{ knowledge_bases: { name: string }[] }>(
      "GET",
      "/api/catalog",
      { token: bob },
    );
    expect(catalog.body.knowledge_bases).toEqual([]);

    // Shared with Bob read-only: he searches it but cannot change it; Carol still sees nothing.
    const shared = await http.call<KnowledgeBaseRecord>("PUT", "/api/kb/secret", {
      token: alice,
      body: { share_config: { mode: "users", uids: ["bob"] } },
    });
    expect(shared.status).toBe(200);
    expect(shared.body.version).toBe(2);
    const bobHits = await http.call<Hits>("POST", "/api/kb/search", {
      token: bob,
      body: { query: "tangerine" },
    });
    expect(bobHits.body.results.map((hit) => hit.kb)).toEqual(["secret"]);
    expect(
      (
        await http.call<{ knowledge_bases: { name: string }[] }>("GET", "/api/catalog", {
          token: bob,
        })
      ).body.knowledge_bases.map((kb) => kb.name),
    ).toEqual(["secret"]);
    expectError(await upload(http, bob, "secret", [["x.txt", "x"]]), 403, "FORBIDDEN");
    expectError(
      await http.call("PUT", "/api/kb/secret", { token: bob, body: { description: "mine" } }),
      403,
      "FORBIDDEN",
    );
    expectError(await http.call("GET", "/api/kb/secret", { token: carol }), 404, "NOT_FOUND");

    // An editor may add files; public makes it everyone's to read.
    await http.call("PUT", "/api/kb/secret", {
      token: alice,
      body: { share_config: { mode: "public", editors: ["bob"] } },
    });
    expect((await upload(http, bob, secret.id, [["b.txt", "bob adds grapefruit\n"]])).status).toBe(
      202,
    );
    await settledFiles(http, alice, secret.id);
    const carolHits = await http.call<Hits>("POST", "/api/kb/search", {
      token: carol,
      body: { query: "grapefruit" },
    });
    expect(carolHits.body.results.map((hit) => hit.file)).toEqual(["b.txt"]);
    expectError(
      await http.call("DELETE", `/api/kb/${secret.id}`, { token: carol }),
      403,
      "FORBIDDEN",
    );

    // Names are unique per owner; deleting removes everything.
    expectError(
      await http.call("POST", "/api/kb", { token: alice, body: { name: "secret" } }),
      409,
      "ALREADY_EXISTS",
    );
    expectError(
      await http.call("POST", "/api/kb", { token: alice, body: { name: "" } }),
      422,
      "VALIDATION_FAILED",
    );
    expect((await http.call("DELETE", `/api/kb/${secret.id}`, { token: alice })).status).toBe(204);
    expectError(await http.call("GET", `/api/kb/${secret.id}`, { token: alice }), 404, "NOT_FOUND");
    const gone = await http.call<Hits>("POST", "/api/kb/search", {
      token: carol,
      body: { query: "grapefruit" },
    });
    expect(gone.body.results).toEqual([]);
  });

  it("answers hostile queries with results or a typed 4xx, never a 5xx", async () => {
    const { http, alice } = await start();
    await createKb(http, alice, { name: "q" });
    await upload(http, alice, "q", [["w.txt", 'wind tunnel OR NEAR AND "quoted" words\n']]);
    await settledFiles(http, alice, "q");
    const many = Array.from({ length: 20_000 }, (_, i) => `word${i}`).join(" ");
    const queries = [
      many,
      `${"x".repeat(5000)} tunnel`,
      'wind" OR "NEAR(a b) kb : * ^ -',
      "AND OR NOT",
      "search_text : tunnel",
      "风洞 \u{1F600} ǅemo",
    ];
    for (const query of queries) {
      const answer = await http.call<Hits>("POST", "/api/kb/search", {
        token: alice,
        body: { query },
      });
      expect(answer.status, `${query.slice(0, 40)}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    const tunnel = await http.call<Hits>("POST", "/api/kb/search", {
      token: alice,
      body: { query: `${"x".repeat(5000)} tunnel` },
    });
    expect(tunnel.body.results.map((hit) => hit.file)).toEqual(["w.txt"]);
  });

  it("deletes one file with its chunks", async () => {
    const { http, alice } = await start();
    await createKb(http, alice, { name: "files" });
    await upload(http, alice, "files", [
      ["keep.txt", "apples\n"],
      ["drop.txt", "apples and pears\n"],
    ]);
    const files = await settledFiles(http, alice, "files");
    const drop = files.find((file) => file.name === "drop.txt");
    expect(
      (await http.call("DELETE", `/api/kb/files/files/${drop?.id}`, { token: alice })).status,
    ).toBe(204);
    expectError(
      await http.call("DELETE", `/api/kb/files/files/${drop?.id}`, { token: alice }),
      404,
      "NOT_FOUND",
    );
    const hits = await http.call<Hits>("POST", "/api/kb/search", {
      token: alice,
      body: { query: "apples pears" },
    });
    expect(hits.body.results.map((hit) => hit.file)).toEqual(["keep.txt"]);
  });
});
