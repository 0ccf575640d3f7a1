import { randomUUID } from "node:crypto";
import { createMiddleware } from "langchain";
import { recordRequest } from "../models/model-request.js";
import type { ModelRequestLog } from "../models/request-log.js";
import { messageText } from "../util/message-text.js";

/**
 * Notes what every model call of the agent was sent (system prompt, subagent list, tools,
 * messages) in `log`, under the id of the response, for `recordThread`. Mounted next to the
 * model (inside every middleware that changes the request), so it sees the request as the
 * model gets it; only calls that answered are noted.
 */
export function createRequestRecorderMiddleware(log: ModelRequestLog) {
  return createMiddleware({
    name: "RequestRecorder",
    wrapModelCall: async (request, handler) => {
      const sent = recordRequest({
        system: messageText(request.systemMessage),
        tools: request.tools,
        messages: request.messages,
      });
      const response = await handler(request);
      // A model's response may have no id yet (the messages reducer gives it one when it is
      // written to the state): give it one now, the way the reducer does, so the message in the
      // checkpoint carries the id this log knows it by.
      if (!response.id) {
        const id = randomUUID();
        response.id = id;
        response.lc_kwargs.id = id;
      }
      log.add(response.id, sent);
      return response;
    },
  });
}
