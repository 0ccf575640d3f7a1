import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { AGENT, DATA, UID } from "./options.js";

type FilesCommand =
  | {
      name: "files-upload";
      store: StoreOptions;
      threadId: string;
      file: string;
      uploadName: string | undefined;
      agent: string | undefined;
    }
  | { name: "files-list"; store: StoreOptions; threadId: string; folder: string | undefined }
  | { name: "files-cat"; store: StoreOptions; threadId: string; path: string };

/** Each subcommand's form, as its errors quote it. */
const SHAPES = {
  upload: "files upload <thread> <file> [name]",
  list: "files list <thread> [folder]",
  cat: "files cat <thread> <path>",
} as const;

/** `files upload | list | cat`: a thread's files (`cli/files.ts`). */
export const files = declareCommand<FilesCommand>({
  name: "files",
  forms: [
    {
      usage: SHAPES.upload,
      about: [
        "Add a local file to a thread's uploads (a new thread id is claimed for",
        "your default agent, or --agent), where its agents can read it.",
      ],
    },
    { usage: SHAPES.list, about: ["List a thread's files (default: its outputs)."] },
    {
      usage: SHAPES.cat,
      about: ["Print one of a thread's files, e.g. /home/gem/user-data/outputs/x.md."],
    },
  ],
  options: [
    UID,
    DATA,
    {
      option: AGENT,
      only: ["upload"],
      refusal: 'option --agent is only for "files upload" among the files commands',
    },
  ],
  examples: ["files upload <thread> ./brief.pdf", "files list <thread>"],
  parse: ({ args: [sub, threadId, ...more], store, text }) => {
    if (sub === undefined || !Object.hasOwn(SHAPES, sub)) {
      throw subcommandError("files", sub, "upload, list or cat");
    }
    const shape = SHAPES[sub as keyof typeof SHAPES];
    if (threadId === undefined) throw new UsageError(`"${shape}" needs a thread id`);
    if (sub === "upload") {
      const [file, uploadName, ...extra] = more;
      if (file === undefined) throw new UsageError(`"${shape}" needs a local file`);
      noMoreArguments(shape, extra);
      return { name: "files-upload", store, threadId, file, uploadName, agent: text(AGENT) };
    }
    if (sub === "list") {
      const [folder, ...extra] = more;
      noMoreArguments(shape, extra);
      return { name: "files-list", store, threadId, folder };
    }
    const [path, ...extra] = more;
    if (path === undefined) throw new UsageError(`"${shape}" needs a path`);
    noMoreArguments(shape, extra);
    return { name: "files-cat", store, threadId, path };
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { catFile, listFiles, uploadFile } = await import("../files.js");
      const { store, threadId } = command;
      if (command.name === "files-upload") return uploadFile(runtime, io, store, command);
      return command.name === "files-list"
        ? listFiles(runtime, io, store, threadId, command.folder)
        : catFile(runtime, io, store, threadId, command.path);
    },
  },
});
