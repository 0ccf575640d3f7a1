import { Command } from "@langchain/langgraph";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";

/**
 * The graph step in which a main agent prepared its skills before 2026-12-02 (the FileScope
 * middleware's `beforeAgent` hook). Its work is now part of the model call
 * (`middleware/file-scope.ts`), so the step no longer exists, but checkpoints saved between a
 * turn's message and that step still name it as what runs next.
 */
const LEGACY_SKILLS_STEP = "FileScope.before_agent";
/** The step that came after it, and comes first now. */
const MODEL_STEP = "model_request";

/**
 * What a run without input must send to go on from `checkpoint` when the step that was next
 * there is the old skills step: a `Command` going to the model call it led to. `undefined` when
 * the checkpoint has no such step pending (LangGraph then knows what is next by itself).
 *
 * Replays and resumes of threads recorded before the change (a test's fixtures, a turn cut short
 * by a crash) would otherwise find nothing to run there.
 */
export function legacySkillsStepResume(checkpoint: Checkpoint): Command | undefined {
  const trigger = `branch:to:${LEGACY_SKILLS_STEP}`;
  const written = checkpoint.channel_versions[trigger];
  if (written === undefined) return undefined;
  const seen = checkpoint.versions_seen[LEGACY_SKILLS_STEP]?.[trigger];
  if (seen !== undefined && !isNewer(written, seen)) return undefined;
  return new Command({ goto: MODEL_STEP });
}

/** LangGraph's channel versions: numbers, or strings that sort in version order. */
function isNewer(version: number | string, than: number | string): boolean {
  return typeof version === "number" && typeof than === "number"
    ? version > than
    : String(version) > String(than);
}
