import type { ComponentChildren } from "preact";
import { type ChatMessage, TASK_TOOL } from "../chat-state.js";

/**
 * Messages as a conversation: the user's, the assistant's (with its tool calls), and tool
 * results folded away. `renderTaskCall` puts something (a card) in place of each `task` call.
 */
export function MessageList(props: {
  messages: ChatMessage[];
  renderTaskCall?: (callId: string) => ComponentChildren;
}) {
  return (
    <ol class="messages">
      {props.messages.map((message) => {
        if (message.role === "tool") {
          if (message.toolName === TASK_TOOL && props.renderTaskCall) return null;
          return (
            <li key={message.id} class="message tool" data-message-role="tool">
              <details>
                <summary>Result of {message.toolName ?? "a tool"}</summary>
                <pre>{message.text}</pre>
              </details>
            </li>
          );
        }
        const otherCalls = message.toolCalls.filter(
          (call) => call.name !== TASK_TOOL || !props.renderTaskCall,
        );
        const taskCalls = props.renderTaskCall
          ? message.toolCalls.filter((call) => call.name === TASK_TOOL)
          : [];
        return (
          <li key={message.id} class={`message ${message.role}`} data-message-role={message.role}>
            <span class="visually-hidden">{message.role === "human" ? "You:" : "Assistant:"}</span>
            {message.text && <div class="text">{message.text}</div>}
            {otherCalls.length > 0 && (
              <p class="tool-calls muted">
                Called {otherCalls.map((call) => call.name).join(", ")}
              </p>
            )}
            {taskCalls.length > 0 && (
              <div class="cards">{taskCalls.map((call) => props.renderTaskCall?.(call.id))}</div>
            )}
          </li>
        );
      })}
    </ol>
  );
}
