/**
 * The login form: asks for an API key (one of `api.keys`), checks it against the API
 * (`GET /sessions?limit=1`) and keeps it in this tab's `sessionStorage`.
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, storeKey } from "./api-client.js";

/** The login form; `onLogin` runs once a key is accepted. */
export function LoginForm(props: { reason: string | null; onLogin: () => void }): preact.JSX.Element {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const onSubmit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const key = input.current?.value.trim() ?? "";
    if (key === "") {
      setError("Enter an API key (one of api.keys in the server's config).");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api("sessions", { query: { limit: 1 }, key, quietAuth: true });
      storeKey(key);
      props.onLogin();
    } catch (e) {
      setError(e instanceof ApiError && e.status === 403 ? "That key is not valid. Check it and try again." : e instanceof Error ? e.message : String(e));
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="view login-view" aria-labelledby="login-heading">
      <h1 id="login-heading">Sign in</h1>
      <p>{props.reason ?? "This server requires an API key."} The key is kept in this browser tab only.</p>
      <form class="login" onSubmit={(e) => void onSubmit(e)}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="key"
          type="password"
          autocomplete="current-password"
          ref={input}
          required
          aria-describedby={error ? "login-error" : undefined}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error !== null ? (
          <p id="login-error" class="error" role="alert">
            {error}
          </p>
        ) : null}
      </form>
    </section>
  );
}
