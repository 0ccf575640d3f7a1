import type { StoreOptions } from "./commands/declaration.js";
import { type CliContext, say } from "./context.js";
import { lazyAsker } from "./lines.js";
import { askOnce, prepareChat } from "./session.js";

/** The question `demo` asks: broad enough that research and review are both worth delegating. */
export const DEMO_QUESTION = "Plan a weekend workshop on renewable energy for high-school students";

/**
 * The `demo` command, what a fresh user sees first: creates the demo agents when the user has
 * no default agent, then asks the default agent {@link DEMO_QUESTION} with live progress.
 *
 * @returns the exit code.
 */
export async function demoCommand(context: CliContext, store: StoreOptions): Promise<number> {
  const target = await prepareChat(context, store, undefined);
  const subagents = target.agent.config_json.context.subagents ?? [];
  say(
    context.io,
    subagents.length > 0
      ? `Asking "${target.agent.slug}", which hands independent parts of the work to its subagents (${subagents.join(", ")}) to run in parallel.`
      : `Asking "${target.agent.slug}" (it has no subagents).`,
  );
  say(context.io, `question: ${DEMO_QUESTION}`);
  say(context.io, "");
  // A demo agent may gate a tool: its requests are asked on stdin like chat's.
  const asker = lazyAsker(context.io, context.onInterrupt);
  let code: number;
  try {
    code = await askOnce(context, target, DEMO_QUESTION, undefined, asker.ask);
  } finally {
    asker.close();
  }
  if (code === 0) say(context.io, 'ask your own: npm run chat -- "<your question>"');
  return code;
}
