import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { DESCRIPTION, EMBEDDER_OPTIONS, embedderOf, KB, NO_EMBEDDING_USE } from "./kb-options.js";
import { DATA, UID } from "./options.js";

/** Embedder settings (the schema judges what the options cannot); `{}`: vectors off. */
type Embedder = Record<string, unknown> | undefined;

type KbCommand =
  | { name: "kb-list"; store: StoreOptions }
  | {
      name: "kb-create";
      store: StoreOptions;
      kb: string;
      description: string | undefined;
      embedder: Embedder;
    }
  | {
      name: "kb-update";
      store: StoreOptions;
      kb: string;
      description: string | undefined;
      /** The new embedder (`{}`: vectors off); undefined: unchanged. */
      embedder: Embedder;
    }
  | { name: "kb-add"; store: StoreOptions; kb: string; paths: string[] }
  | { name: "kb-files"; store: StoreOptions; kb: string }
  | { name: "kb-search"; store: StoreOptions; query: string; kb: string | undefined }
  | { name: "kb-rm"; store: StoreOptions; kb: string };

const SUBCOMMANDS =
  "list, create <name>, update <kb>, add <kb> <paths…>, files <kb>, search <query…> or rm <kb>";

/** `kb …`: knowledge bases, their files and search (`cli/kb.ts`, `cli/kb-update.ts`). */
export const kb = declareCommand<KbCommand>({
  name: "kb",
  forms: [
    { usage: "kb list", about: ["List the knowledge bases you may read."] },
    {
      usage: "kb create <name>",
      about: [
        "Create a knowledge base (--description says what it holds; --embedding-model",
        "and --embedding-dimensions add vector search beside full-text search).",
      ],
    },
    {
      usage: "kb update <kb>",
      about: [
        "Change a knowledge base's --description or its embedder: --embedding-model",
        "with --embedding-dimensions (and optionally --embedding-base-url,",
        "--embedding-key-env) replace it, --no-embedding turns vectors off. A new",
        "model, length or URL reindexes its files: each file's vectors are followed",
        "until ready or failed (exit 1 if any failed).",
      ],
    },
    {
      usage: "kb add <kb> <paths…>",
      about: [
        "Add files (txt, md, html, pdf, docx; a folder adds the files in it) and",
        "show each file's progress until it is indexed or failed.",
      ],
    },
    { usage: "kb files <kb>", about: ["List a knowledge base's files and their status."] },
    {
      usage: "kb search <query…>",
      about: ["Search your knowledge bases (--kb narrows to one): best passages first."],
    },
    { usage: "kb rm <kb>", about: ["Delete a knowledge base with its files."] },
  ],
  options: [
    UID,
    DATA,
    { option: DESCRIPTION, only: ["create", "update"] },
    ...EMBEDDER_OPTIONS,
    NO_EMBEDDING_USE,
    { option: KB, only: ["search"] },
  ],
  examples: [
    'kb create handbook --description "Company rules"',
    "kb create papers --embedding-model bge-m3 --embedding-dimensions 1024 --embedding-base-url http://127.0.0.1:8000/v1",
    "kb add handbook ./docs/leave.pdf ./docs/policies",
    "kb update papers --embedding-model text-embedding-3-small --embedding-dimensions 1536",
    "kb update papers --no-embedding",
    'kb search "how much notice for a vacation"',
  ],
  parse: (input) => {
    // The embedder's options are judged first, whatever the subcommand.
    const embedder = embedderOf(input);
    const { store, text } = input;
    const [sub, ...more] = input.args;
    if (sub === "list") {
      noMoreArguments("kb list", more);
      return { name: "kb-list", store };
    }
    if (sub === "search") {
      if (more.length === 0) throw new UsageError('"kb search" needs a query');
      return { name: "kb-search", store, query: more.join(" "), kb: text(KB) };
    }
    if (sub !== "create" && sub !== "update" && sub !== "add" && sub !== "files" && sub !== "rm") {
      throw subcommandError("kb", sub, SUBCOMMANDS);
    }
    const [kb, ...extra] = more;
    if (kb === undefined) {
      const what = sub === "create" ? "a name" : "a knowledge base (name or id)";
      throw new UsageError(`"kb ${sub}" needs ${what}`);
    }
    if (sub === "add") {
      if (extra.length === 0) throw new UsageError('"kb add <kb> <paths…>" needs files or folders');
      return { name: "kb-add", store, kb, paths: extra };
    }
    noMoreArguments(`kb ${sub} ${sub === "create" ? "<name>" : "<kb>"}`, extra);
    const description = text(DESCRIPTION);
    if (sub === "update" && description === undefined && embedder === undefined) {
      throw new UsageError(
        '"kb update <kb>" needs something to change: --description, --embedding-model with --embedding-dimensions, or --no-embedding',
      );
    }
    if (sub === "create" || sub === "update") {
      return { name: `kb-${sub}`, store, kb, description, embedder };
    }
    return { name: `kb-${sub}`, store, kb };
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const kbs = await import("../kb.js");
      const { store } = command;
      switch (command.name) {
        case "kb-list":
          return kbs.listKnowledgeBases(runtime, io, store);
        case "kb-create":
          return kbs.createKnowledgeBase(
            runtime,
            io,
            store,
            command.kb,
            command.description,
            command.embedder,
          );
        case "kb-update": {
          const { updateKnowledgeBase } = await import("../kb-update.js");
          return updateKnowledgeBase(
            runtime,
            io,
            store,
            command.kb,
            command.description,
            command.embedder,
          );
        }
        case "kb-add":
          return kbs.addToKnowledgeBase(runtime, io, store, command.kb, command.paths);
        case "kb-files":
          return kbs.listKnowledgeFiles(runtime, io, store, command.kb);
        case "kb-search":
          return kbs.searchKnowledge(runtime, io, store, command.query, command.kb);
        case "kb-rm":
          return kbs.removeKnowledgeBase(runtime, io, store, command.kb);
      }
    },
  },
});
