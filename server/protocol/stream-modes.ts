import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { WIRE_STREAM_MODES, type WireStreamMode } from "./translate.js";

/**
 * The stream modes a request asks for (`stream_mode`: one, or several as a list or a repeated
 * query parameter), checked against those we stream. One rule and one refusal for creating a
 * streamed run (the body's `stream_mode`) and joining one (`GET …/runs/:id/stream?stream_mode=`,
 * which `runs.joinStream({ streamMode })` sends).
 *
 * @returns the modes, without repeats; `fallback` when none are asked for
 * @throws SubagentGraphError `UNSUPPORTED` (field `stream_mode`) naming the first unknown mode
 *   and the modes we stream
 */
export function parseStreamModes(
  requested: string | string[] | undefined,
  fallback: WireStreamMode[],
): WireStreamMode[] {
  if (requested === undefined) return fallback;
  const list = Array.isArray(requested) ? requested : [requested];
  const known = Object.keys(WIRE_STREAM_MODES);
  for (const mode of list) {
    if (!known.includes(mode)) {
      throw new SubagentGraphError(
        ErrorCode.Unsupported,
        `stream_mode: "${mode}" is not supported: use ${known.map((m) => `"${m}"`).join(", ")}`,
        { field: "stream_mode" },
      );
    }
  }
  return [...new Set(list)] as WireStreamMode[];
}
