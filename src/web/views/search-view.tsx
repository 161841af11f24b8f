/**
 * Full-text search (`GET /search`, the same FTS syntax as the CLI: words, `"phrases"`,
 * `prefix*`, `AND`/`OR`/`NOT`; CJK text works as typed). The query (`q`) and the page
 * (`offset`) are in the URL. Hits are grouped by session (the route's `sessions`), each with
 * its snippet built from the route's `segments` as plain text nodes — matches in `<mark>` —
 * so no HTML from the server or from stored content is ever inserted. A hit links to the
 * transcript at that message (`sessions/<id>?message=<messageId>`).
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type ApiError } from "../api-client.js";
import type { SearchHit, SearchPage, SnippetSegment } from "../api-types.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { formatTime, isoTime } from "../format.js";
import { href, navigate, onLinkClick, type PageLocation } from "../router.js";

const PAGE_SIZE = 20;

/** A snippet as text, the matches highlighted (text nodes only). */
export function Snippet(props: { segments: readonly SnippetSegment[] }): preact.JSX.Element {
  return <Untrusted class="snippet">{props.segments.map((s, i) => (s.match ? <mark key={i}>{s.text}</mark> : s.text))}</Untrusted>;
}

/** The search view. */
export function SearchView(props: { location: PageLocation }): preact.JSX.Element {
  const q = (props.location.query.get("q") ?? "").trim();
  const offsetParam = Number(props.location.query.get("offset") ?? "0");
  const offset = Number.isInteger(offsetParam) && offsetParam > 0 ? offsetParam : 0;
  const [page, setPage] = useState<SearchPage | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [attempt, setAttempt] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (q === "") input.current?.focus();
  }, []);

  useEffect(() => {
    setPage(null);
    setError(null);
    if (q === "") return;
    const abort = new AbortController();
    setLoading(true);
    api<SearchPage>("search", { query: { query: q, limit: PAGE_SIZE, offset: offset === 0 ? null : offset }, signal: abort.signal })
      .then((p) => {
        setPage(p);
        setLoading(false);
      })
      .catch((e: unknown) => {
        if (abort.signal.aborted) return;
        setError(e instanceof Error ? e : new Error(String(e)));
        setLoading(false);
      });
    return () => abort.abort();
  }, [q, offset, attempt]);

  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const value = new FormData(event.currentTarget as HTMLFormElement).get("q");
    navigate(href(["search"], { q: typeof value === "string" ? value.trim() : "" }));
  };

  const hits = new Map<number, SearchHit>((page?.items ?? []).map((h) => [h.messageId, h]));
  return (
    <section class="view search-view" aria-labelledby="search-heading">
      <h1 id="search-heading">Search</h1>
      <form class="filters search-form" role="search" aria-label="Message search" onSubmit={onSubmit} key={q}>
        <label class="search-label">
          Search messages
          <input ref={input} name="q" type="search" value={q} placeholder='deploy, "rolled back", roll*, NOT test' autocomplete="off" />
        </label>
        <button type="submit">Search</button>
      </form>
      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {loading ? <Loading label="Searching…" /> : null}
      {page !== null && page.items.length === 0 ? <p class="empty">{offset === 0 ? "No messages match." : "No more matches."}</p> : null}
      {page !== null && page.items.length > 0 ? (
        <p class="result-count" role="status">
          Matches {offset + 1}–{offset + page.items.length} in {page.sessions.length} {page.sessions.length === 1 ? "session" : "sessions"}
        </p>
      ) : null}
      <ol class="search-results" aria-label="Results by session">
        {(page?.sessions ?? []).map((group) => (
          <li class="search-group" key={group.sessionId} data-session-id={group.sessionId}>
            <h2 class="search-session">
              <a href={href(["sessions", group.sessionId])} onClick={onLinkClick}>
                <Untrusted class={group.title === null ? "untitled" : "title"}>{group.title ?? group.sessionId}</Untrusted>
              </a>
            </h2>
            <p class="meta">
              <span class="source">{group.source}</span>
              {group.model !== null ? <Untrusted class="model">{group.model}</Untrusted> : null}
              <span>
                started <time dateTime={isoTime(group.sessionStartedAt)}>{formatTime(group.sessionStartedAt)}</time>
              </span>
            </p>
            <ul class="search-hits">
              {group.messageIds.map((messageId) => {
                const hit = hits.get(messageId);
                if (hit === undefined) return null;
                return (
                  <li key={messageId} class="search-hit" data-message-id={messageId}>
                    <a class="hit-link" href={href(["sessions", group.sessionId], { message: messageId })} onClick={onLinkClick}>
                      <span class="hit-role">{hit.role}</span> <Snippet segments={hit.segments} />
                    </a>
                    <time class="hit-time" dateTime={isoTime(hit.timestamp)}>
                      {formatTime(hit.timestamp)}
                    </time>
                  </li>
                );
              })}
            </ul>
          </li>
        ))}
      </ol>
      {page !== null && (offset > 0 || page.items.length === PAGE_SIZE) ? (
        <nav class="pager" aria-label="Result pages">
          {offset > 0 ? (
            <a href={href(["search"], { q, offset: Math.max(0, offset - PAGE_SIZE) || null })} onClick={onLinkClick}>
              ← Previous matches
            </a>
          ) : null}
          {page.items.length === PAGE_SIZE ? (
            <a href={href(["search"], { q, offset: offset + PAGE_SIZE })} onClick={onLinkClick}>
              More matches →
            </a>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
