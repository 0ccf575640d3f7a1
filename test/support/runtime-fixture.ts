import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../runtime.js";

/** Savers every runtime suite runs on. */
export const SAVER_KINDS = ["memory", "sqlite"] as const;
export type SaverKindUnderTest = (typeof SAVER_KINDS)[number];

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
  const runtime = await createRuntime({
    dataDir,
    checkpointer: options.saver ?? "memory",
    env: options.env ?? {},
    warn: (message) => warnings.push(message),
    ...(options.models ? { models: options.models } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...options.runtime,
  });
  return {
    runtime,
    dataDir,
    warnings,
    dispose: async () => {
      await runtime.close();
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
