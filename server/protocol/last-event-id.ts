import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { shownValue } from "../../util/shown-value.js";

/** `-1`, `0`, or a whole number without leading zeros: the ids our SSE frames carry, and `-1`. */
const EVENT_ID = /^(-1|0|[1-9][0-9]*)$/;

/**
 * The event a run stream resumes after, from its `Last-Event-ID` header: -1 (every event, a
 * replay from the start) without the header.
 *
 * What clients send: `@langchain/langgraph-sdk`'s `runs.joinStream` sends its `lastEventId`
 * option as given (`useStream` joins with `"-1"`), and a client rejoining after a dropped stream
 * sends the `id` of the last frame it read, which is ours: a whole number from 0
 * (`server/protocol/sse.ts`). Anything else is refused rather than read as "from the start": a
 * replay the client did not ask for would hand it every event again.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `Last-Event-ID`) for any other value,
 *   including an empty one and ids past `Number.MAX_SAFE_INTEGER`
 */
export function parseLastEventId(header: string | string[] | undefined): number {
  if (header === undefined) return -1;
  // Surrounding spaces are not part of a header's value (RFC 9110 §5.5); repeated headers
  // (an array, or values Node joined with ", ") are refused below.
  const text = Array.isArray(header) ? header.join(", ") : header.trim();
  if (EVENT_ID.test(text)) {
    const id = Number(text);
    if (Number.isSafeInteger(id)) return id;
  }
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `Last-Event-ID: ${shownValue(text, 40)} is not an event id: send the id of the last event you received (a whole number from 0), -1 to replay from the start, or no header`,
    { field: "Last-Event-ID" },
  );
}
