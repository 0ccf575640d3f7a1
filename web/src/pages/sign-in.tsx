import { useState } from "preact/hooks";
import { Api, ApiError } from "../api.js";

/**
 * Asks for an API token and checks it against the server before keeping it, so a typo is told
 * at once rather than on the first page.
 */
export function SignIn(props: { error: string | undefined; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState(props.error);
  const [checking, setChecking] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    if (!candidate) {
      setError("Enter an API token (tsx cli/main.ts tokens issue <user> prints one).");
      return;
    }
    setChecking(true);
    try {
      await new Api(candidate).listAgents(false);
      props.onSignedIn(candidate);
    } catch (caught) {
      setError(
        caught instanceof ApiError && caught.status === 401
          ? `The server refused this token: ${caught.message}`
          : `Cannot sign in: ${(caught as Error).message}`,
      );
    } finally {
      setChecking(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>subagent-graph console</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input
          id="token"
          type="password"
          autocomplete="current-password"
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
          aria-describedby={error ? "token-error" : undefined}
        />
        {error && (
          <p id="token-error" role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={checking}>
          {checking ? "Checking…" : "Sign in"}
        </button>
        <p class="hint">
          The first <code>npm start</code> prints the demo user's token; issue more with{" "}
          <code>tsx cli/main.ts tokens issue &lt;user&gt;</code>.
        </p>
      </form>
    </main>
  );
}
