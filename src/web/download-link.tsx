/**
 * A link that downloads a JSONL export route of the API.
 *
 * - No stored key (loopback access without keys): a plain `<a href download>` to the API
 *   route, so the browser streams the server's response straight to disk.
 * - A stored key: a link cannot send `Authorization`, so a click fetches the route with the
 *   key and saves the body through a temporary object URL (held in memory while it downloads).
 *   The API has no short-lived download tokens, and the key is never put in a URL (it would
 *   land in logs and history).
 *
 * @module
 */
import { useState } from "preact/hooks";
import { apiDownload, apiUrl, storedKey } from "./api-client.js";
import type { QueryInput } from "./router.js";

/** A download link for `path` with `query`, saved as `filename`; errors appear next to it. */
export function DownloadLink(props: { path: string; query?: QueryInput; filename: string; label: string; class?: string }): preact.JSX.Element {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const query = props.query ?? {};
  const onClick = (event: MouseEvent): void => {
    setError(null);
    if (storedKey() === null) return; // the browser downloads the link itself
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    apiDownload(props.path, query, props.filename)
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(false));
  };
  return (
    <span class={`download ${props.class ?? ""}`.trim()}>
      <a href={apiUrl(props.path, query)} download={props.filename} onClick={onClick} aria-busy={busy ? "true" : undefined}>
        {busy ? "Preparing download…" : props.label}
      </a>
      {error !== null ? (
        <span class="error" role="alert">
          {" "}
          {error}
        </span>
      ) : null}
    </span>
  );
}
