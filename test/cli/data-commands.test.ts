import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { cliInProcess } from "../support/in-process-cli.js";

/** The CLI as typed, in this process, with no environment: the offline model answers. */
const run = (argv: string[]) => cliInProcess(argv);

/**
 * The commands that manage what a data folder holds (skills, files, users, tokens), typed one after
 * another as a user would. In this process (`runCli`, what the bin runs): argv, exit codes and
 * printing through a real process are `main.int.test.ts`'s.
 */
describe("data folder commands", { timeout: 60_000 }, () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cli-data-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("skills add/list/remove and files upload/list/cat work on the data dir", async () => {
    const skillDir = join(dataDir, "source", "house-style");
    await mkdir(skillDir, { recursive: true });
    await writeFile(
      join(skillDir, "SKILL.md"),
      "---\nname: house-style\ndescription: How we write reports.\n---\nShort sentences.\n",
    );
    const added = await run(["skills", "add", skillDir, "--data", dataDir]);
    expect(added.stderr).toBe("");
    expect(added.stdout).toContain('installed skill "house-style": How we write reports.');
    const again = await run(["skills", "add", skillDir, "--data", dataDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("--replace");
    const listed = await run(["skills", "list", "--data", dataDir]);
    expect(listed.stdout).toMatch(/^house-style\s+How we write reports\.$/m);

    // Uploading to a new thread claims it for the user's default agent (seeded by chat).
    await run(["chat", "--data", dataDir, "hello"]);
    const local = join(dataDir, "source", "brief.txt");
    await writeFile(local, "the brief\n");
    const uploaded = await run(["files", "upload", "t-cli", local, "--data", dataDir]);
    expect(uploaded.stderr).toBe("");
    expect(uploaded.stdout).toContain("uploaded /home/gem/user-data/uploads/brief.txt (10 B)");
    const files = await run([
      "files",
      "list",
      "t-cli",
      "/home/gem/user-data/uploads",
      "--data",
      dataDir,
    ]);
    expect(files.stdout).toMatch(/^10 B\s+\S+\s+\/home\/gem\/user-data\/uploads\/brief\.txt$/m);
    const cat = await run([
      "files",
      "cat",
      "t-cli",
      "/home/gem/user-data/uploads/brief.txt",
      "--data",
      dataDir,
    ]);
    expect(cat.stdout).toBe("the brief\n");
    const other = await run(["files", "list", "t-cli", "--uid", "mallory", "--data", dataDir]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^error \[NOT_FOUND\]: thread "t-cli" not found/);

    const removed = await run(["skills", "remove", "house-style", "--data", dataDir]);
    expect(removed.stdout).toContain('removed skill "house-style"');
  });

  it("users add, tokens issue/list/revoke: a revoked token no longer authenticates", async () => {
    const added = await run([
      "users",
      "add",
      "alice",
      "--name",
      "Alice Example",
      "--data",
      dataDir,
    ]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('added user "alice"');
    const users = await run(["users", "list", "--data", dataDir]);
    expect(users.stdout).toMatch(/^UID\s+NAME\s+CREATED$/m);
    expect(users.stdout).toMatch(/^alice\s+Alice Example\s+\d{4}-\d\d-\d\dT\S+Z$/m);

    const issued = await run(["tokens", "issue", "alice", "--label", "laptop", "--data", dataDir]);
    expect(issued.stderr).toBe("");
    expect(issued.code).toBe(0);
    const token = /^(sgk_[A-Za-z0-9_-]+)$/m.exec(issued.stdout)?.[1];
    const tokenId = /\b(tok_[0-9a-f]{16})\b/.exec(issued.stdout)?.[1];
    if (token === undefined || tokenId === undefined) {
      throw new Error(`no token or token id in:\n${issued.stdout}`);
    }
    // Printed once, with how to use it.
    expect(issued.stdout.split(token)).toHaveLength(2);
    expect(issued.stdout).toContain("cannot be shown again");
    expect(issued.stdout).toContain("Authorization: Bearer <token>");
    expect(issued.stdout).toContain("x-api-key: <token>");

    const before = await createRuntime({ dataDir, env: {} });
    try {
      expect(await before.users.authenticate(token)).toBe("alice");
    } finally {
      await before.close();
    }

    const listed = await run(["tokens", "list", "alice", "--data", dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+LABEL\s+CREATED\s+LAST USED\s+REVOKED$/m);
    // Used once (by the runtime above), not revoked.
    expect(listed.stdout).toMatch(new RegExp(`^${tokenId}\\s+laptop\\s+\\S+Z\\s+\\S+Z\\s+-$`, "m"));
    expect(listed.stdout).not.toContain(token);

    const revoked = await run(["tokens", "revoke", "alice", tokenId, "--data", dataDir]);
    expect(revoked.stderr).toBe("");
    expect(revoked.code).toBe(0);
    expect(revoked.stdout.trim()).toBe(`revoked ${tokenId}`);
    const again = await run(["tokens", "revoke", "alice", tokenId, "--data", dataDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`"${tokenId}"`);

    const after = await createRuntime({ dataDir, env: {} });
    try {
      expect(await after.users.authenticate(token)).toBeUndefined();
    } finally {
      await after.close();
    }

    const unknown = await run(["tokens", "issue", "ghost", "--data", dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error \[NOT_FOUND\]: user "ghost" not found.*users add ghost/);
  });
});
