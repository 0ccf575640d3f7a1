import type { RecordedRequest } from "./model-request.js";

/**
 * What each model call of a runtime was sent, by the id of the response it got: kept while the
 * runtime records (`createRuntime({ recordModelRequests: true })`), read by `recordThread`.
 *
 * Checkpoints hold a thread's messages but not the system prompt and tools of each call, so
 * those are taken as the call is made, which also makes a recording state what the agents
 * sent then rather than what they would send now. Keyed by response id, so a response left
 * behind by a fork or a replay is never matched to another branch's request. In memory, for
 * the life of the runtime: for recording sessions and tests, not for a long-lived server.
 */
export class ModelRequestLog {
  private readonly byResponse = new Map<string, RecordedRequest>();

  /** Notes that the response with id `responseId` answered `request`. */
  add(responseId: string, request: RecordedRequest): void {
    this.byResponse.set(responseId, request);
  }

  /** The request the response with id `responseId` answered, if this log saw it. */
  requestFor(responseId: string): RecordedRequest | undefined {
    return this.byResponse.get(responseId);
  }
}
