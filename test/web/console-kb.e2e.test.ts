import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../runtime.js";
import { axeViolations } from "../support/axe.js";
import {
  type BrowserSession,
  openSession,
  waitForText,
  waitUntil,
  withArtifacts,
} from "../support/browser.js";
import {
  type ConsoleServer,
  signInWithToken,
  startConsoleServer,
} from "../support/console-server.js";
import { startFakeOpenAIServer } from "../support/fake-openai-server.js";

/**
 * The console's knowledge base pages in Chromium against a real server, as a user goes: create
 * one (a bad name first), upload a Markdown file and a PDF damaged inside, watch both go from
 * queued to indexed and error without reloading, be told of refused uploads and searches, drop
 * a file, find a line, see the new knowledge base offered by the agent form, edit it, delete a
 * file and the knowledge base; give one an embedder (a bad dimension refused first, a reindex
 * confirmed) and follow its file's vectors from pending to ready. The server indexes nothing itself (`knowledgeIngest: false`): a second runtime over the
 * same store is the ingest worker, started once the page shows the files queued, so the page is
 * seen following the status live.
 */

const ALICE = "alice";
const BOB = "bob";
/** Uploads over this many bytes are refused (413), so the test can send one. */
const MAX_FILE_BYTES = 64 * 1024;

/** Line 6 holds the words the search looks for; the rest must stay inert when shown. */
const LEAVE_MD = [
  "# Leave policy",
  "",
  "Everyone gets 25 days a year.",
  "",
  "## Notice",
  "Ask for a vacation with two weeks of notice.",
  "",
  '<img src="x" onerror="window.__kbXss = true">',
  "<script>window.__kbXss = true</script>",
].join("\n");
/** Starts like a PDF (so the upload is accepted) but is not one inside: ingest fails. */
const BROKEN_PDF = "%PDF-1.4\nthis is not a pdf body at all\n%%EOF";

describe("knowledge base pages in Chromium", () => {
  let harness: ConsoleServer | undefined;
  let worker: Runtime | undefined;
  let session: BrowserSession | undefined;

  const server = () => {
    if (!harness) throw new Error("the server did not start");
    return harness;
  };
  const ui = () => {
    if (!session) throw new Error("the browser did not start");
    return session;
  };

  beforeAll(async () => {
    harness = await startConsoleServer({
      users: [ALICE, BOB],
      runtime: { knowledgeIngest: false, maxKnowledgeFileBytes: MAX_FILE_BYTES },
    });
    session = await openSession(harness.browser, harness.base);
    await signInWithToken(session, harness.token(ALICE));
  }, 180_000);

  afterAll(async () => {
    await worker?.close();
    await harness?.close();
  }, 60_000);

  /** Starts the ingest worker: another runtime over the server's store that indexes. */
  async function startIngestWorker(): Promise<Runtime> {
    worker = await createRuntime({
      dataDir: server().fixture.dataDir,
      checkpointer: "memory",
      env: {},
      warn: () => {},
      knowledgeIngest: true,
    });
    return worker;
  }

  const fileRow = (name: string, status?: string) =>
    ui().page.locator(`tr[data-kb-file="${name}"]${status ? `[data-status="${status}"]` : ""}`);

  /**
   * axe-core on the page as it is; any violation fails with the view's name. The hits' text is
   * left out: it is the documents' own (this test's has an image without alt text on purpose).
   */
  async function audit(view: string) {
    const violations = await axeViolations(ui().page, [".kb-hits .markdown"]);
    expect({ view, violations }).toEqual({ view, violations: [] });
  }

  /** The page scrolls sideways when its content is wider than the viewport. */
  async function scrollsSideways(): Promise<boolean> {
    return ui().page.evaluate<boolean>(
      "document.scrollingElement.scrollWidth > document.scrollingElement.clientWidth",
    );
  }

  async function openKnowledgeBasesPage() {
    const { page } = ui();
    await page.getByRole("link", { name: "Knowledge bases", exact: true }).click();
    await page.getByRole("heading", { name: "Knowledge bases", exact: true, level: 1 }).waitFor();
  }

  it("creates a knowledge base, follows its files' ingest, searches it and deletes it", async () => {
    const { page } = ui();
    await withArtifacts(ui(), "kb-lifecycle", async () => {
      await openKnowledgeBasesPage();
      await waitForText(page.locator("main"), "No knowledge bases yet");

      // No name: the server's 422 is shown under the Name field, which is marked invalid.
      await page.getByRole("button", { name: "New knowledge base", exact: true }).click();
      const form = page.getByRole("form", { name: "New knowledge base" });
      await form.getByLabel("Description", { exact: true }).fill("Company rules");
      await form.getByRole("button", { name: "Create", exact: true }).click();
      const nameError = form.locator('[data-error-for="name"]');
      await waitForText(nameError, "use 1 to 100 characters");
      expect(await form.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe(
        "true",
      );
      await audit("create form with an error");

      await form.getByLabel("Name", { exact: true }).fill("handbook");
      await form.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("heading", { name: "handbook", exact: true, level: 1 }).waitFor();
      const [created] = await server().runtime.kb.list(ALICE);
      expect(created?.name).toBe("handbook");
      expect(created?.description).toBe("Company rules");
      expect(created?.share_config.mode).toBe("private");

      // Two files in one upload: both are queued (nothing indexes until the worker starts).
      await page.getByLabel("Files to upload", { exact: true }).setInputFiles([
        { name: "leave.md", mimeType: "text/markdown", buffer: Buffer.from(LEAVE_MD) },
        { name: "broken.pdf", mimeType: "application/pdf", buffer: Buffer.from(BROKEN_PDF) },
      ]);
      await fileRow("leave.md", "queued").waitFor();
      await fileRow("broken.pdf", "queued").waitFor();
      const summary = page.locator("[data-ingest-summary]");
      await waitForText(summary, "2 files: 2 queued.");
      // While files wait, the page reads the list again and again.
      expect(await summary.getAttribute("data-polling")).toBe("true");
      const listings: string[] = [];
      const onRequest = (request: { method(): string; url(): string }) => {
        if (request.method() === "GET" && /\/api\/kb\/[^/]+\/files$/.test(request.url())) {
          listings.push(request.url());
        }
      };
      page.on("request", onRequest);
      await waitUntil("two more listings of the files", () => listings.length >= 2);
      page.off("request", onRequest);

      // The worker indexes them; the page follows without a reload.
      const ingest = await startIngestWorker();
      await ingest.kb.idle();
      await fileRow("leave.md", "indexed").waitFor();
      await fileRow("broken.pdf", "error").waitFor();
      const reason = await waitForText(
        fileRow("broken.pdf").locator("[data-file-error]"),
        'file "broken.pdf" cannot be read',
      );
      const stored = await server().runtime.kb.listFiles(ALICE, "handbook");
      expect(stored.find((file) => file.name === "broken.pdf")?.error).toBe(reason);
      await waitForText(summary, "2 files: 1 indexed, 1 error.");
      // Nothing is queued or indexing any more: the page stops reading the list.
      expect(await summary.getAttribute("data-polling")).toBe("false");

      // Refusals are told next to the upload control: a type no ingest reads (the whole
      // upload refused, 415), a file over the limit (413), and a duplicate of leave.md.
      const upload = page.getByLabel("Files to upload", { exact: true });
      await upload.setInputFiles([
        { name: "tool.exe", mimeType: "application/octet-stream", buffer: Buffer.from("MZ") },
      ]);
      await waitForText(page.locator("[data-upload-error]"), 'file "tool.exe" has type ".exe"');
      const tooLarge = page.waitForResponse(
        (response) => response.request().method() === "POST" && /\/files$/.test(response.url()),
      );
      await upload.setInputFiles([
        { name: "big.txt", mimeType: "text/plain", buffer: Buffer.alloc(MAX_FILE_BYTES + 1, 97) },
      ]);
      expect((await tooLarge).status()).toBe(413);
      await waitForText(
        page.locator("[data-upload-error]"),
        `file "big.txt" is ${MAX_FILE_BYTES + 1} bytes, over the ${MAX_FILE_BYTES}-byte limit`,
      );
      await upload.setInputFiles([
        { name: "leave-copy.md", mimeType: "text/markdown", buffer: Buffer.from(LEAVE_MD) },
        { name: "virus.bat", mimeType: "application/octet-stream", buffer: Buffer.from("echo") },
      ]);
      await waitForText(page.locator('[data-rejected-file="virus.bat"]'), ".bat");
      await waitForText(page.locator(".upload-report"), '"leave-copy.md" is already there');
      expect(await fileRow("leave-copy.md").count()).toBe(0);
      expect(await fileRow("big.txt").count()).toBe(0);

      // A file dropped on the picker is uploaded like a picked one.
      const dropped = await page.evaluateHandle(
        `(() => {
          const transfer = new DataTransfer();
          transfer.items.add(new File(["Ferries leave the harbour at noon.\\n"], "dropped.txt", { type: "text/plain" }));
          return transfer;
        })()`,
      );
      await page.locator("[data-drop-zone]").dispatchEvent("drop", { dataTransfer: dropped });
      await fileRow("dropped.txt", "indexed").waitFor();

      // A search the server refuses is told under the box; a real one shows the line.
      const search = page.getByRole("form", { name: "Knowledge base search" });
      await search.getByLabel("Search this knowledge base", { exact: true }).fill("   ");
      await search.getByRole("button", { name: "Search", exact: true }).click();
      await search.getByRole("alert").waitFor();
      await search
        .getByLabel("Search this knowledge base", { exact: true })
        .fill("vacation notice");
      await search.getByRole("button", { name: "Search", exact: true }).click();
      const hit = page.locator('[data-hit-file="leave.md"]').first();
      await hit.waitFor();
      const hitText = (await hit.textContent()) ?? "";
      expect(hitText).toContain("Ask for a vacation with two weeks of notice.");
      expect(hitText).toMatch(/lines? \d+(-\d+)?/);
      const [best] = await server().runtime.kb.search(ALICE, {
        query: "vacation notice",
        kb: "handbook",
      });
      expect(best).toBeDefined();
      expect(hitText).toContain(
        best?.line_start === best?.line_end
          ? `line ${best?.line_start}`
          : `lines ${best?.line_start}-${best?.line_end}`,
      );
      expect(best?.line_start).toBeLessThanOrEqual(6);
      expect(best?.line_end).toBeGreaterThanOrEqual(6);
      // The document's HTML is rendered inert: no handler attribute, no script ran.
      expect(await hit.locator("[onerror], script").count()).toBe(0);
      expect(await page.evaluate("window.__kbXss === undefined")).toBe(true);

      // Accessible, and as wide as the viewport, on a desktop and on a phone.
      await audit("detail with files and hits, 1280 px");
      await page.setViewportSize({ width: 390, height: 844 });
      await audit("detail with files and hits, 390 px");
      expect(await scrollsSideways()).toBe(false);
      await page.setViewportSize({ width: 1280, height: 900 });

      // The agent form offers the new knowledge base, with no reload in between.
      await page.getByRole("link", { name: "Agents", exact: true }).click();
      await page.getByRole("button", { name: "New agent", exact: true }).click();
      const kbChoices = page
        .getByRole("form", { name: "Agent form" })
        .getByRole("group", { name: "Knowledge bases", exact: true });
      await kbChoices.getByRole("checkbox", { name: "handbook", exact: true }).waitFor();
      await page.getByRole("button", { name: "Cancel", exact: true }).click();

      // The list counts the files; the knowledge base opens from it.
      await openKnowledgeBasesPage();
      const row = page.locator('tr[data-kb-name="handbook"]');
      await waitForText(row.locator("[data-file-count]"), "3");
      await audit("list");
      await row.getByRole("link", { name: "handbook" }).click();
      await fileRow("broken.pdf").waitFor();

      // Deleting a file asks first (Escape keeps it), then removes it.
      await page.getByRole("button", { name: "Delete file broken.pdf", exact: true }).click();
      const question = page.getByRole("dialog");
      await question.getByRole("heading", { name: 'Delete file "broken.pdf"?' }).waitFor();
      await page.keyboard.press("Escape");
      await question.waitFor({ state: "detached" });
      expect(await fileRow("broken.pdf").count()).toBe(1);
      await page.getByRole("button", { name: "Delete file broken.pdf", exact: true }).click();
      await question.getByRole("button", { name: "Delete", exact: true }).click();
      await fileRow("broken.pdf").waitFor({ state: "detached" });
      expect(
        (await server().runtime.kb.listFiles(ALICE, "handbook")).map((file) => file.name).sort(),
      ).toEqual(["dropped.txt", "leave.md"]);

      // Editing: a new description and public sharing, saved with the version read. The form
      // takes the focus in the same task as it renders (read right after Preact's render
      // microtask), not after a paint, when a late focus would move typing already aimed at
      // another field into Name.
      const focusedAtRender = await page.evaluate<string | undefined>(`(() => {
        const edit = [...document.querySelectorAll("button")].find(
          (button) => button.textContent.trim() === "Edit",
        );
        edit.click();
        return new Promise((resolve) => queueMicrotask(() => resolve(document.activeElement?.id)));
      })()`);
      expect(focusedAtRender).toBe("kb-name");
      const edit = page.getByRole("form", { name: "Edit handbook" });
      await edit.getByLabel("Description", { exact: true }).fill("Company rules, for everyone");
      await edit.getByLabel("Sharing", { exact: true }).selectOption("public");
      await edit.getByRole("button", { name: "Save", exact: true }).click();
      await edit.waitFor({ state: "detached" });
      await waitForText(page.locator(".kb-description"), "Company rules, for everyone");
      const edited = await server().runtime.kb.get(ALICE, "handbook");
      expect(edited.share_config.mode).toBe("public");
      expect(edited.version).toBe(2);

      // Deleting the knowledge base returns to the list, without it.
      await page.getByRole("button", { name: "Delete knowledge base", exact: true }).click();
      await question.getByRole("heading", { name: 'Delete "handbook"?' }).waitFor();
      await question.getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("heading", { name: "Knowledge bases", exact: true, level: 1 }).waitFor();
      await waitForText(page.locator("main"), "No knowledge bases yet");
      expect(await server().runtime.kb.list(ALICE)).toEqual([]);
    });
  }, 120_000);

  it("sets an embedder on a knowledge base with a file, confirms the reindex and follows its vectors", async () => {
    const { page } = ui();
    const runtime = server().runtime;
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    try {
      await withArtifacts(ui(), "kb-embedder", async () => {
        // A knowledge base with one indexed file and no vectors; then no worker runs, so the
        // page is seen waiting for the vectors before any are made.
        await worker?.close();
        worker = undefined;
        const kb = await runtime.kb.create(ALICE, { name: "manuals" });
        await runtime.kb.addFiles(ALICE, kb.id, [
          { name: "paint.txt", content: Buffer.from("Paint the fence a bright colour.\n") },
        ]);
        const first = await startIngestWorker();
        await first.kb.idle();
        await first.close();
        worker = undefined;
        expect((await runtime.kb.listFiles(ALICE, kb.id)).map((f) => f.status)).toEqual([
          "indexed",
        ]);

        await page.goto(`/#/kb/${encodeURIComponent(kb.id)}`);
        await fileRow("paint.txt", "indexed").waitFor();
        await waitForText(page.locator("[data-search-mode]"), "search: words only");
        expect(await page.getByRole("columnheader", { name: "Vectors" }).count()).toBe(0);

        // A dimension the schema refuses: asked first (the file is reindexed), then the
        // server's message under the Dimensions field, which is marked invalid.
        await page.getByRole("button", { name: "Edit", exact: true }).click();
        const edit = page.getByRole("form", { name: "Edit manuals" });
        const vectorsOn = edit.getByLabel("Search by meaning too (an embedding model)", {
          exact: true,
        });
        expect(await vectorsOn.isChecked()).toBe(false);
        expect(await edit.getByLabel("Dimensions", { exact: true }).count()).toBe(0);
        await vectorsOn.check();
        await edit.getByLabel("Embedding model", { exact: true }).fill("hash-16");
        await edit.getByLabel("Dimensions", { exact: true }).fill("0");
        await edit.getByLabel("Base URL (optional)", { exact: true }).fill(fake.url);
        await edit.getByRole("button", { name: "Save", exact: true }).click();
        const question = page.getByRole("dialog");
        await question.getByRole("heading", { name: 'Reindex "manuals"?' }).waitFor();
        await waitForText(question.locator("[data-embedder-warning]"), "Saving reindexes its file");
        await question.getByRole("button", { name: "Save and reindex", exact: true }).click();
        const dimensionsError = edit.locator('[data-error-for="embedder_dimensions"]');
        await waitForText(dimensionsError, "embedder.dimensions 0 is invalid");
        await waitForText(dimensionsError, "a whole number from 1 to 8192");
        const dimensions = edit.getByLabel("Dimensions", { exact: true });
        expect(await dimensions.getAttribute("aria-invalid")).toBe("true");
        await waitUntil("the Dimensions field to have the focus", () =>
          page.evaluate<boolean>('document.activeElement?.id === "kb-embedder_dimensions"'),
        );
        expect((await runtime.kb.get(ALICE, kb.id)).embedder).toEqual({});
        await audit("edit form with an embedder error");

        // Cancel keeps it as it was; Save and reindex saves it.
        await dimensions.fill("16");
        await edit.getByRole("button", { name: "Save", exact: true }).click();
        await question.getByRole("button", { name: "Cancel", exact: true }).click();
        await question.waitFor({ state: "detached" });
        expect((await runtime.kb.get(ALICE, kb.id)).version).toBe(1);
        await edit.getByRole("button", { name: "Save", exact: true }).click();
        await question.getByRole("button", { name: "Save and reindex", exact: true }).click();
        await edit.waitFor({ state: "detached" });
        expect((await runtime.kb.get(ALICE, kb.id)).embedder).toEqual({
          model: "hash-16",
          dimensions: 16,
          base_url: fake.url,
        });
        await waitForText(
          page.locator("[data-search-mode]"),
          "words and meaning (hash-16, 16 dimensions)",
        );

        // The file waits for its vectors (no worker yet); the page keeps reading the list,
        // and follows them to ready once the worker runs, without a reload.
        await fileRow("paint.txt").and(page.locator('[data-vectors="pending"]')).waitFor();
        const summary = page.locator("[data-ingest-summary]");
        await waitForText(summary, "Vectors: 1 pending.");
        expect(await summary.getAttribute("data-polling")).toBe("true");
        await audit("detail with vectors pending");
        await startIngestWorker();
        await fileRow("paint.txt")
          .and(page.locator('[data-vectors="ready"]'))
          .waitFor({ timeout: 30_000 });
        await waitForText(summary, "Vectors: 1 ready.");
        expect(await summary.getAttribute("data-polling")).toBe("false");
        expect(fake.embeddingRequests.some((request) => request.model === "hash-16")).toBe(true);
        const [hit] = await runtime.kb.search(ALICE, { query: "color", kb: "manuals" });
        expect(hit?.file).toBe("paint.txt");

        // Vectors off: asked first, then the column goes.
        await page.getByRole("button", { name: "Edit", exact: true }).click();
        await vectorsOn.uncheck();
        await edit.getByRole("button", { name: "Save", exact: true }).click();
        await question.getByRole("heading", { name: 'Turn vectors off for "manuals"?' }).waitFor();
        await question.getByRole("button", { name: "Save and drop vectors", exact: true }).click();
        await edit.waitFor({ state: "detached" });
        await fileRow("paint.txt").and(page.locator('[data-vectors="none"]')).waitFor();
        await waitForText(page.locator("[data-search-mode]"), "search: words only");
        expect((await runtime.kb.get(ALICE, kb.id)).embedder).toEqual({});

        // A new knowledge base gets its embedder from the create form.
        await openKnowledgeBasesPage();
        await page.getByRole("button", { name: "New knowledge base", exact: true }).click();
        const create = page.getByRole("form", { name: "New knowledge base" });
        await create.getByLabel("Name", { exact: true }).fill("atlas");
        await create.getByLabel("Search by meaning too (an embedding model)").check();
        await create.getByLabel("Embedding model", { exact: true }).fill("hash-8");
        await create.getByLabel("Dimensions", { exact: true }).fill("8");
        await create.getByLabel("Base URL (optional)", { exact: true }).fill(fake.url);
        await create.getByLabel("API key variable (optional)", { exact: true }).fill("ATLAS_KEY");
        await audit("create form with an embedder");
        await create.getByRole("button", { name: "Create", exact: true }).click();
        await page.getByRole("heading", { name: "atlas", exact: true, level: 1 }).waitFor();
        expect((await runtime.kb.get(ALICE, "atlas")).embedder).toEqual({
          model: "hash-8",
          dimensions: 8,
          base_url: fake.url,
          api_key_env: "ATLAS_KEY",
        });
      });
    } finally {
      await fake.close();
    }
  }, 120_000);

  it("a second user sees only what is shared with them: read-only refuses uploads (403), the rest is a 404", async () => {
    const runtime = server().runtime;
    const secret = await runtime.kb.create(ALICE, { name: "alice-private" });
    await runtime.kb.create(ALICE, {
      name: "alice-public",
      description: "for everyone",
      share_config: { mode: "public", uids: [], editors: [] },
    });
    const bobSession = await openSession(server().browser, server().base);
    try {
      await withArtifacts(bobSession, "kb-second-user", async () => {
        const { page } = bobSession;
        await signInWithToken(bobSession, server().token(BOB));
        await page.getByRole("link", { name: "Knowledge bases", exact: true }).click();
        const shared = page.locator('tr[data-kb-name="alice-public"]');
        await shared.waitFor();
        await waitForText(shared, "owner: alice");
        expect(await page.locator('tr[data-kb-name="alice-private"]').count()).toBe(0);
        expect(await page.locator("main").textContent()).not.toContain("alice-private");

        // Shared read-only: an upload is refused (403) with the server's reason, shown there.
        await shared.getByRole("link", { name: "alice-public" }).click();
        await page.getByRole("heading", { name: "alice-public", exact: true, level: 1 }).waitFor();
        const refused = page.waitForResponse(
          (response) => response.request().method() === "POST" && /\/files$/.test(response.url()),
        );
        await page
          .getByLabel("Files to upload", { exact: true })
          .setInputFiles([
            { name: "mine.md", mimeType: "text/markdown", buffer: Buffer.from("# Mine\n") },
          ]);
        expect((await refused).status()).toBe(403);
        await waitForText(page.locator("[data-upload-error]"), "is shared with you read-only");
        expect(await runtime.kb.listFiles(ALICE, "alice-public")).toEqual([]);
        await page.getByRole("link", { name: "Knowledge bases", exact: true }).click();
        await page.locator('tr[data-kb-name="alice-public"]').waitFor();

        // By keyboard alone: the form opens with Name focused, Enter creates, and the new
        // knowledge base's heading has the focus.
        await page.getByRole("button", { name: "New knowledge base", exact: true }).focus();
        await page.keyboard.press("Enter");
        await waitUntil("the Name field to have the focus", () =>
          page.evaluate<boolean>('document.activeElement?.id === "kb-name"'),
        );
        await page.keyboard.type("bob-notes");
        await page.keyboard.press("Enter");
        const heading = page.getByRole("heading", { name: "bob-notes", exact: true, level: 1 });
        await heading.waitFor();
        await waitUntil("the heading to have the focus", () =>
          page.evaluate<boolean>(
            'document.activeElement?.tagName === "H1" && document.activeElement.textContent === "bob-notes"',
          ),
        );
        expect((await runtime.kb.list(BOB)).map((kb) => kb.name).sort()).toEqual([
          "alice-public",
          "bob-notes",
        ]);
        expect((await runtime.kb.list(ALICE)).map((kb) => kb.name)).not.toContain("bob-notes");

        // Its address, typed in: the server's 404 is shown, and nothing of it.
        await page.goto(`/#/kb/${encodeURIComponent(secret.id)}`);
        const refusal = page.getByRole("alert").first();
        await waitForText(refusal, "Cannot open this knowledge base");
        expect(await page.locator("main").textContent()).not.toContain("alice-private");
        expect(await page.getByLabel("Files to upload", { exact: true }).count()).toBe(0);
      });
    } finally {
      await bobSession.context.close();
    }
  }, 60_000);
});
