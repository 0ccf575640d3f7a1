import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { Api, type ApiError, TOKEN_KEY } from "./api.js";
import { AgentsPage } from "./pages/agents-page.js";
import { ChatPage } from "./pages/chat-page.js";
import { KbDetailPage } from "./pages/kb-detail-page.js";
import { KbListPage } from "./pages/kb-list-page.js";
import { SignIn } from "./pages/sign-in.js";

/**
 * The page a hash names: `#/agents`, `#/kb`, `#/kb/<knowledge base id>`, `#/chat` or
 * `#/chat/<thread id>`.
 */
type Route =
  | { page: "agents" }
  | { page: "kb"; kbId: string | undefined }
  | { page: "chat"; threadId: string | undefined };

function routeOf(hash: string): Route {
  const [page, id] = hash.replace(/^#\/?/, "").split("/");
  const decoded = id ? decodeURIComponent(id) : undefined;
  if (page === "agents") return { page: "agents" };
  if (page === "kb") return { page: "kb", kbId: decoded };
  return { page: "chat", threadId: decoded };
}

/** The page `route` names. */
function RoutePage(props: { api: Api; route: Route }) {
  const { api, route } = props;
  if (route.page === "agents") return <AgentsPage api={api} />;
  if (route.page === "chat") return <ChatPage api={api} threadId={route.threadId} />;
  if (route.kbId === undefined) {
    return (
      <KbListPage
        api={api}
        onOpen={(kb) => {
          location.hash = `#/kb/${encodeURIComponent(kb.id)}`;
        }}
      />
    );
  }
  return (
    <KbDetailPage
      key={route.kbId}
      api={api}
      kbId={route.kbId}
      onDeleted={() => {
        location.hash = "#/kb";
      }}
    />
  );
}

function storedToken(): string | undefined {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The console: sign-in until a token is stored, then the agents, knowledge base and chat pages. A 401 from any
 * call forgets the token and returns to sign-in with the server's reason.
 */
export function App() {
  const [token, setToken] = useState(storedToken);
  const [signInError, setSignInError] = useState<string | undefined>();
  const [route, setRoute] = useState(() => routeOf(location.hash));

  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);

  const signOut = useCallback((reason?: string) => {
    localStorage.removeItem(TOKEN_KEY);
    setToken(undefined);
    setSignInError(reason);
  }, []);

  const api = useMemo(
    () =>
      token
        ? new Api(token, (error: ApiError) =>
            signOut(`Signed out: ${error.message}. Enter a valid API token.`),
          )
        : undefined,
    [token, signOut],
  );

  if (!api) {
    return (
      <SignIn
        error={signInError}
        onSignedIn={(accepted) => {
          localStorage.setItem(TOKEN_KEY, accepted);
          setSignInError(undefined);
          setToken(accepted);
        }}
      />
    );
  }

  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">subagent-graph</span>
        <nav aria-label="Main">
          <a href="#/agents" aria-current={route.page === "agents" ? "page" : undefined}>
            Agents
          </a>
          <a href="#/kb" aria-current={route.page === "kb" ? "page" : undefined}>
            Knowledge bases
          </a>
          <a href="#/chat" aria-current={route.page === "chat" ? "page" : undefined}>
            Chat
          </a>
        </nav>
        <button type="button" class="link" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main>
        <RoutePage api={api} route={route} />
      </main>
    </div>
  );
}
