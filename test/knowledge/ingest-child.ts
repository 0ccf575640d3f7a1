/**
 * A process that starts indexing a large file and then waits to be killed
 * (`kb-crash.int.test.ts`): `node --import tsx ingest-child.ts <dataDir> <database>`. It prints
 * `INDEXING` once the store says its file is being indexed.
 */
import { createRuntime } from "../../runtime.js";

const [dataDir, database] = process.argv.slice(2);
if (!dataDir || !database) throw new Error("usage: ingest-child.ts <dataDir> <database>");
const runtime = await createRuntime({
  dataDir,
  database,
  checkpointer: "memory",
  env: {},
  warn: () => {},
  knowledgeLeaseMs: 1000,
});
await runtime.kb.create("alice", { name: "big" });
// About 8 MB of distinct lines: thousands of chunks, seconds of indexing.
const lines = Array.from(
  { length: 80_000 },
  (_, i) => `line ${i} of the large manual about turbines, valves and pumps, section ${i % 97}`,
);
lines.push("the final line mentions the zeppelin hangar");
await runtime.kb.addFiles("alice", "big", [
  { name: "manual.txt", content: Buffer.from(lines.join("\n")) },
]);
for (;;) {
  const [file] = await runtime.kb.listFiles("alice", "big");
  if (file?.status === "indexing") {
    process.stdout.write("INDEXING\n");
    break;
  }
  if (file?.status === "indexed" || file?.status === "error") {
    process.stdout.write(`TOO LATE: ${file.status}\n`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 2));
}
// Keep indexing until killed.
await new Promise(() => {});
