/** The slash commands of the interactive chat, as `/help` there (`cli/repl.ts`) and `help chat` list them. */
export const CHAT_COMMANDS_HELP = `In the interactive chat:
  /help                This list.
  /new                 Start a new thread.
  /exit, /quit         Quit (so does Ctrl-D).
  Ctrl-C               Cancel a running answer; a second Ctrl-C quits.`;
