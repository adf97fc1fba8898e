// The login form: a bearer token, exchanged once for an HttpOnly session
// cookie (docs/ui.md); the token is not kept by the page.
import { useState } from "preact/hooks";
import { login } from "../api";
import { ErrorBox } from "../ui";

export function LoginPage({ done }: { done: () => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="login">
      <h1>Log in to csched</h1>
      <p>
        Paste a bearer token. <code>csched token new NAME viewer</code> makes one, and its line goes
        into cschedd's <code>--tokens-file</code>; <code>csched ui</code> says more.
      </p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            await login(token.trim());
            setToken("");
            done();
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
