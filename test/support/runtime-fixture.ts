import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { ForkSafePostgresSaver } from "../../checkpoints/postgres-saver.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../runtime.js";
import { createTestDatabase } from "./postgres-cluster.js";

/**
 * A saver {@link makeRuntime} can build: `postgres` is a fork-safe saver on a fresh database,
 * which then also holds the agent store.
 */
export type SaverKindUnderTest = "memory" | "sqlite" | "postgres";

/** Savers every runtime suite runs on. */
export const SAVER_KINDS: readonly SaverKindUnderTest[] = ["memory", "sqlite", "postgres"];

/**
 * A {@link ForkSafePostgresSaver} on a fresh database of the run's private cluster (vitest's
 * global setup). `vitest` is imported here, not at the top: this module is also loaded by
 * worker processes outside vitest.
 */
async function freshPostgres(): Promise<{ url: string; saver: ForkSafePostgresSaver }> {
  const { inject } = await import("vitest");
  const url = await createTestDatabase(inject("postgresUrl"), "rt");
  return { url, saver: await ForkSafePostgresSaver.open(url, { max: 5 }) };
}

export interface RuntimeFixture {
  runtime: Runtime;
  dataDir: string;
  warnings: string[];
  dispose(): Promise<void>;
}

/** A runtime in a fresh temp dir, with no environment (offline, no keys) and captured warnings. */
export async function makeRuntime(
  options: {
    saver?: SaverKindUnderTest;
    models?: Record<string, BaseChatModel>;
    tools?: StructuredToolInterface[];
    limits?: RuntimeOptions["limits"];
    env?: NodeJS.ProcessEnv;
    /** Any other runtime option (file tool limits, upload size, ...). */
    runtime?: Partial<RuntimeOptions>;
  } = {},
): Promise<RuntimeFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), "subagent-graph-test-"));
  const warnings: string[] = [];
  const kind = options.saver ?? "memory";
  // The postgres saver is lent to the runtime (a saver object is never closed by it):
  // dispose() ends its pool.
  // With "postgres" the agent store is on that database too: the whole runtime runs on it.
  let postgres: ForkSafePostgresSaver | undefined;
  let store: string | undefined;
  let checkpointer: NonNullable<RuntimeOptions["checkpointer"]>;
  if (kind === "postgres") {
    const fresh = await freshPostgres();
    postgres = fresh.saver;
    store = fresh.url;
    checkpointer = postgres;
  } else {
    checkpointer = kind;
  }
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      dataDir,
      checkpointer,
      env: options.env ?? {},
      warn: (message) => warnings.push(message),
      ...(options.models ? { models: options.models } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(store ? { database: store } : {}),
      ...options.runtime,
    });
  } catch (error) {
    await postgres?.close();
    throw error;
  }
  return {
    runtime,
    dataDir,
    warnings,
    dispose: async () => {
      try {
        await runtime.close();
      } finally {
        await postgres?.close();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Payload of a subagent record using the named model spec. */
export function subagentPayload(slug: string, model: string, extra: Record<string, unknown> = {}) {
  return {
    slug,
    name: slug,
    description: `the ${slug} subagent`,
    backend_id: "SubAgentBackend",
    config_json: { context: { model, system_prompt: `You are ${slug}.`, ...extra } },
  };
}

/** Payload of a main agent using the named model spec and subagent allow-list. */
export function mainAgentPayload(
  slug: string,
  model: string,
  subagents: string[] | undefined,
  extra: Record<string, unknown> = {},
) {
  return {
    slug,
    name: slug,
    description: `the ${slug} main agent`,
    config_json: {
      context: {
        model,
        system_prompt: `You are ${slug}, the main agent.`,
        ...(subagents ? { subagents } : {}),
        ...extra,
      },
    },
  };
}

/**
 * Gives `uid` the offline pair most HTTP tests run: a `researcher` subagent and `boss`, the
 * default main agent allowed to call it.
 */
export async function addOfflineBoss(runtime: Runtime, uid: string): Promise<void> {
  await runtime.agents.create(uid, subagentPayload("researcher", "offline"));
  await runtime.agents.create(uid, {
    ...mainAgentPayload("boss", "offline", ["researcher"]),
    is_default: true,
  });
}
