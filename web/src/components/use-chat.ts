import { useEffect, useMemo, useReducer } from "preact/hooks";
import type { Api } from "../api.js";
import { ChatStore } from "../chat-store.js";

/**
 * The chat page's {@link ChatStore}, for as long as the page shows conversations of `api`'s user:
 * it lists agents and conversations once, opens thread `threadId` whenever the route names
 * another, draws the page again after each change, and stops following runs when the page goes.
 */
export function useChat(api: Api, threadId: string | undefined): ChatStore {
  const [, bump] = useReducer((count: number) => count + 1, 0);
  const chat = useMemo(
    () =>
      new ChatStore(api, {
        onChange: () => bump(undefined),
        navigate: (hash) => {
          location.hash = hash;
        },
      }),
    [api],
  );
  // The route is the truth for a run that ends before the opening below has run.
  chat.show(threadId);
  useEffect(() => {
    void chat.load();
    return () => chat.dispose();
  }, [chat]);
  useEffect(() => {
    void chat.open(threadId);
  }, [chat, threadId]);
  return chat;
}
