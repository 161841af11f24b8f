/**
 * The page shell: header with the views' nav links (from routes.ts), the login form when
 * the API asks for a key, and the view matching the URL.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { onAuthRequired, storedKey, storeKey } from "./api-client.js";
import { LoginForm } from "./login-form.js";
import { ROUTES } from "./routes.js";
import { href, matchPath, onLinkClick, useLocation } from "./router.js";

/** The whole page. */
export function App(): preact.JSX.Element {
  const location = useLocation();
  const [login, setLogin] = useState<string | null | false>(false);
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    onAuthRequired((error) => {
      storeKey(null);
      setLogin(error.status === 403 ? "The stored API key is no longer accepted." : null);
    });
    return () => onAuthRequired(null);
  }, []);

  let matched: { route: (typeof ROUTES)[number]; params: Record<string, string> } | null = null;
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, location.path);
    if (params !== null) {
      matched = { route, params };
      break;
    }
  }
  useEffect(() => {
    document.title = `Threadline — ${login !== false ? "Sign in" : (matched?.route.title ?? "Not found")}`;
  });

  const signOut = (): void => {
    storeKey(null);
    setLogin(null);
  };
  const current = location.path.split("/")[0] ?? "";

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href([])} onClick={onLinkClick}>
          Threadline
        </a>
        <nav aria-label="Views">
          {ROUTES.filter((r) => r.nav !== undefined).map((r) => {
            const path = r.nav!.path;
            const active = (path[0] ?? "") === current || (path.length === 0 && current === "sessions");
            return (
              <a key={r.pattern} href={href(path)} onClick={onLinkClick} aria-current={active ? "page" : undefined}>
                {r.nav!.label}
              </a>
            );
          })}
        </nav>
        {storedKey() !== null && login === false ? (
          <button type="button" class="sign-out" onClick={signOut}>
            Sign out
          </button>
        ) : null}
      </header>
      <main id="main">
        {login !== false ? (
          <LoginForm
            reason={login}
            onLogin={() => {
              setLogin(false);
              setGeneration((n) => n + 1);
            }}
          />
        ) : matched !== null ? (
          <div key={generation}>{matched.route.render(matched.params, location)}</div>
        ) : (
          <section class="view">
            <h1>Not found</h1>
            <p>
              There is no such page.{" "}
              <a href={href([])} onClick={onLinkClick}>
                Go to the sessions
              </a>
              .
            </p>
          </section>
        )}
      </main>
    </>
  );
}
