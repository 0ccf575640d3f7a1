import type { Command } from "./args.js";
import { listAgents, showAgent } from "./agents.js";
import { chatCommand } from "./chat.js";
import type { CliContext } from "./context.js";
import { demoCommand } from "./demo.js";
import { catFile, listFiles, uploadFile } from "./files.js";
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
import { addSkill, listSkills, removeSkill } from "./skills.js";
import { listThreads, showThread } from "./threads.js";
import { addUser, issueToken, listTokens, listUsers, revokeToken } from "./users.js";

/**
 * Runs a command that works on an open runtime (every command but `help`, `serve` and
 * `studio`). Kept apart from `run.ts` so that `--help`, a usage mistake and `studio` load
 * none of the runtime's modules.
 */
export function dispatch(
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
    case "threads-show":
      return showThread(runtime, io, command.store, command.threadId);
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
