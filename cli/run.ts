import { createRuntime, type Runtime } from "../runtime.js";
import { listAgents, showAgent } from "./agents.js";
import { type Command, commandHelp, parseCommandLine, USAGE, UsageError } from "./args.js";
import { chatCommand } from "./chat.js";
import { type CliContext, EXIT_INTERRUPTED, type Io } from "./context.js";
import { demoCommand } from "./demo.js";
import { catFile, listFiles, uploadFile } from "./files.js";
import { Interrupts } from "./interrupts.js";
import {
  addToKnowledgeBase,
  createKnowledgeBase,
  listKnowledgeBases,
  listKnowledgeFiles,
  removeKnowledgeBase,
  searchKnowledge,
} from "./kb.js";
import { updateKnowledgeBase } from "./kb-update.js";
import { listMcpServers } from "./mcp.js";
import { describeError } from "./report.js";
import { serveCommand } from "./serve.js";
import { addSkill, listSkills, removeSkill } from "./skills.js";
import { studioCommand } from "./studio.js";
import { listThreads } from "./threads.js";
import { addUser, issueToken, listTokens, listUsers, revokeToken } from "./users.js";

const EXIT_ERROR = 1;
const EXIT_USAGE = 2;

/**
 * Runs the command line `argv` (the arguments after the script name; see {@link USAGE}) and
 * returns the exit code: 0 done, 1 an error, 2 a usage mistake, 130 cut short with Ctrl-C.
 * The runtime it opens is closed before it returns, whatever happened.
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv, io.env);
  } catch (error) {
    return reportFailure(io, error);
  }
  if (command.name === "help") {
    io.stdout.write(`${command.topic === undefined ? USAGE : commandHelp(command.topic)}\n`);
    return 0;
  }
  if (command.name === "studio") return studioCommand(command, io);
  if (command.name === "serve") {
    // The server owns its runtime and its signals: a Ctrl-C is a graceful shutdown there.
    try {
      return await serveCommand(command, io);
    } catch (error) {
      return reportFailure(io, error);
    }
  }

  const interrupts = new Interrupts();
  const onInterrupt = () => {
    if (interrupts.press() === "cancelled") {
      io.stderr.write("\n(cancelling the run: press Ctrl-C again to quit)\n");
    }
  };
  process.on("SIGINT", onInterrupt);
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime({ dataDir: command.store.dataDir, env: io.env });
    const context: CliContext = { runtime, io, interrupts, onInterrupt };
    // A Ctrl-C outside a run (while seeding, or reading stdin) has nothing to cancel: quit.
    return await Promise.race([
      dispatch(context, command),
      interrupts.quit.then(() => EXIT_INTERRUPTED),
    ]);
  } catch (error) {
    return reportFailure(io, error);
  } finally {
    process.off("SIGINT", onInterrupt);
    await runtime?.close();
  }
}

function dispatch(
  context: CliContext,
  command: Exclude<Command, { name: "help" | "serve" | "studio" }>,
) {
  const { runtime, io } = context;
  switch (command.name) {
    case "chat":
      return chatCommand(context, command);
    case "demo":
      return demoCommand(context, command.store);
    case "agents-list":
      return listAgents(runtime, io, command.store);
    case "agents-show":
      return showAgent(runtime, io, command.store, command.slug);
    case "threads-list":
      return listThreads(runtime, io, command.store);
    case "skills-list":
      return listSkills(runtime, io);
    case "skills-add":
      return addSkill(runtime, io, command.folder, command.replace);
    case "skills-remove":
      return removeSkill(runtime, io, command.skill);
    case "mcp-list":
      return listMcpServers(runtime, io);
    case "kb-list":
      return listKnowledgeBases(runtime, io, command.store);
    case "kb-create":
      return createKnowledgeBase(
        runtime,
        io,
        command.store,
        command.kb,
        command.description,
        command.embedder,
      );
    case "kb-update":
      return updateKnowledgeBase(
        runtime,
        io,
        command.store,
        command.kb,
        command.description,
        command.embedder,
      );
    case "kb-add":
      return addToKnowledgeBase(runtime, io, command.store, command.kb, command.paths);
    case "kb-files":
      return listKnowledgeFiles(runtime, io, command.store, command.kb);
    case "kb-search":
      return searchKnowledge(runtime, io, command.store, command.query, command.kb);
    case "kb-rm":
      return removeKnowledgeBase(runtime, io, command.store, command.kb);
    case "files-upload":
      return uploadFile(runtime, io, command.store, command);
    case "files-list":
      return listFiles(runtime, io, command.store, command.threadId, command.folder);
    case "files-cat":
      return catFile(runtime, io, command.store, command.threadId, command.path);
    case "users-add":
      return addUser(runtime, io, command.uid, command.displayName);
    case "users-list":
      return listUsers(runtime, io);
    case "tokens-issue":
      return issueToken(runtime, io, command.uid, command.label);
    case "tokens-list":
      return listTokens(runtime, io, command.uid);
    case "tokens-revoke":
      return revokeToken(runtime, io, command.uid, command.tokenId);
  }
}

function reportFailure(io: Io, error: unknown): number {
  if (error instanceof UsageError) {
    io.stderr.write(`error: ${error.message}\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  io.stderr.write(`${describeError(error)}\n`);
  return EXIT_ERROR;
}
