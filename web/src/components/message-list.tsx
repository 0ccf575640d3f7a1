import type { ComponentChildren } from "preact";
import { TASK_TOOL_NAME } from "../../../contract.js";
import type { ChatMessage } from "../chat-state.js";
import { MarkdownText } from "./markdown-text.js";

/** A tool call's arguments as the user reads them. */
function argumentsText(args: Record<string, unknown>): string {
  return JSON.stringify(args, null, 2);
}

/**
 * Messages as a conversation: the user's (as typed), the assistant's (markdown, sanitised), and
 * each tool call as a folded block with its arguments and, once it came, its result.
 * `renderTaskCall` puts something (a card) in place of each `task` call.
 */
export function MessageList(props: {
  messages: ChatMessage[];
  renderTaskCall?: (callId: string) => ComponentChildren;
  /**
   * What follows a message (its Edit or Regenerate buttons), or what replaces it (an edit
   * form, returned with `replace: true`).
   */
  renderActions?: (
    message: ChatMessage,
    index: number,
  ) => { node: ComponentChildren; replace?: boolean } | undefined;
}) {
  const results = new Map<string, ChatMessage>();
  for (const message of props.messages) {
    if (message.role === "tool" && message.toolCallId) results.set(message.toolCallId, message);
  }
  const answered = new Set<string>();
  for (const message of props.messages) {
    for (const call of message.toolCalls) if (results.has(call.id)) answered.add(call.id);
  }
  return (
    <ol class="messages">
      {props.messages.map((message, index) => {
        const actions = props.renderActions?.(message, index);
        if (actions?.replace) {
          return (
            <li key={message.id} class={`message ${message.role}`} data-message-role="editing">
              {actions.node}
            </li>
          );
        }
        if (message.role === "tool") {
          // Shown with the call it answers; a result without its call stands alone.
          if (message.toolCallId && answered.has(message.toolCallId)) return null;
          return (
            <li key={message.id} class="message tool" data-message-role="tool">
              <details class="tool-call">
                <summary>Result of {message.toolName ?? "a tool"}</summary>
                <pre>{message.text}</pre>
              </details>
            </li>
          );
        }
        const otherCalls = message.toolCalls.filter(
          (call) => call.name !== TASK_TOOL_NAME || !props.renderTaskCall,
        );
        const taskCalls = props.renderTaskCall
          ? message.toolCalls.filter((call) => call.name === TASK_TOOL_NAME)
          : [];
        return (
          <li key={message.id} class={`message ${message.role}`} data-message-role={message.role}>
            <span class="visually-hidden">{message.role === "human" ? "You:" : "Assistant:"}</span>
            {message.text &&
              (message.role === "assistant" ? (
                <MarkdownText text={message.text} />
              ) : (
                <div class="text plain">{message.text}</div>
              ))}
            {otherCalls.map((call) => {
              const result = results.get(call.id);
              return (
                <details key={call.id} class="tool-call" data-tool-call={call.name}>
                  <summary>
                    Called <code>{call.name}</code>
                    {result ? "" : " (waiting for its result)"}
                  </summary>
                  <p class="tool-label">Arguments</p>
                  <pre>{argumentsText(call.args)}</pre>
                  {result && (
                    <>
                      <p class="tool-label">Result</p>
                      <pre>{result.text}</pre>
                    </>
                  )}
                </details>
              );
            })}
            {taskCalls.length > 0 && (
              <div class="cards">{taskCalls.map((call) => props.renderTaskCall?.(call.id))}</div>
            )}
            {actions?.node}
          </li>
        );
      })}
    </ol>
  );
}
