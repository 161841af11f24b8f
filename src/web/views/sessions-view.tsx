/**
 * The sessions list (`GET /sessions`): newest first, paged with the API's keyset cursor
 * ("Load more" appends the next page), filters in the URL query string so a view can be
 * bookmarked: `source` (repeatable), `order` (`last_active` | `started`), and — shown only
 * when the server's `GET /sessions` accepts them (read from `/openapi.json`) — `model`,
 * `since` / `until` (local days `YYYY-MM-DD`, sent as epoch seconds) and `titled`
 * (`yes` | `no`).
 *
 * Keyboard: Tab reaches each row's link; ArrowDown/ArrowUp (or j/k) move between rows;
 * Enter opens the transcript.
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type ApiError } from "../api-client.js";
import type { SessionPage, SessionSummary } from "../api-types.js";
import { queryParams } from "../capabilities.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { DownloadLink } from "../download-link.js";
import { dayToSeconds, formatCost, formatCount, formatTime, isoTime } from "../format.js";
import { href, navigate, onLinkClick, rememberListLocation, type PageLocation, type QueryInput } from "../router.js";

const PAGE_SIZE = 50;

/** The list's filters as read from the URL. */
interface ListFilters {
  sources: string[];
  order: "last_active" | "started";
  models: string[];
  since: string | null;
  until: string | null;
  titled: "yes" | "no" | null;
}

function readFilters(query: URLSearchParams): ListFilters {
  const list = (name: string): string[] =>
    query
      .getAll(name)
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== "");
  const titled = query.get("titled");
  return {
    sources: list("source"),
    order: query.get("order") === "started" ? "started" : "last_active",
    models: list("model"),
    since: query.get("since"),
    until: query.get("until"),
    titled: titled === "yes" || titled === "no" ? titled : null,
  };
}

/** The page URL's query for some filters (defaults left out). */
function filterQuery(f: ListFilters): QueryInput {
  return {
    source: f.sources,
    order: f.order === "last_active" ? null : f.order,
    model: f.models,
    since: f.since,
    until: f.until,
    titled: f.titled,
  };
}

/**
 * The API query for some filters, limited to the parameters the server accepts (docs/http.md
 * `GET /sessions`: `model` repeatable, `since` / `until` epoch seconds on the ordering time,
 * `titled` boolean); a server without them in /openapi.json gets none and the page hides
 * those filters.
 */
function apiQuery(f: ListFilters, supported: Set<string>, cursor: string | null): QueryInput {
  const q: QueryInput = { limit: PAGE_SIZE, order: f.order, source: f.sources, cursor };
  if (supported.has("model")) q["model"] = f.models;
  const since = dayToSeconds(f.since);
  const until = dayToSeconds(f.until, true);
  if (supported.has("since") && since !== null) q["since"] = since;
  if (supported.has("until") && until !== null) q["until"] = until;
  if (supported.has("titled") && f.titled !== null) q["titled"] = f.titled === "yes" ? "true" : "false";
  return q;
}

/**
 * The `GET /export` query for the list's filters (the same names as `GET /sessions`, only
 * those the export route accepts). `order` is sent only when not the default, so "no
 * filters" exports everything oldest first, like the CLI.
 */
function exportQuery(f: ListFilters, supported: Set<string>): QueryInput {
  const q = apiQuery(f, supported, null);
  delete q["limit"];
  delete q["cursor"];
  if (f.order === "last_active") delete q["order"];
  for (const name of Object.keys(q)) if (!supported.has(name)) delete q[name];
  return q;
}

function rowLabel(s: SessionSummary): string {
  return s.title ?? s.preview ?? s.id;
}

/** Moves focus between row links with the arrow keys (or j/k). */
function onListKey(event: KeyboardEvent): void {
  const key = event.key;
  if (!["ArrowDown", "ArrowUp", "j", "k"].includes(key)) return;
  const links = Array.from((event.currentTarget as HTMLElement).querySelectorAll<HTMLAnchorElement>("a.session-link"));
  if (links.length === 0) return;
  const at = links.indexOf(document.activeElement as HTMLAnchorElement);
  const next = key === "ArrowDown" || key === "j" ? Math.min(links.length - 1, at + 1) : Math.max(0, at === -1 ? 0 : at - 1);
  event.preventDefault();
  links[next]!.focus();
}

/** The sessions list view. */
export function SessionsView(props: { location: PageLocation }): preact.JSX.Element {
  const filters = readFilters(props.location.query);
  const key = JSON.stringify(filters);
  const [supported, setSupported] = useState<Set<string> | null>(null);
  const [exportParams, setExportParams] = useState<Set<string> | null>(null);
  const [items, setItems] = useState<SessionSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [attempt, setAttempt] = useState(0);
  const loadedKey = useRef<string | null>(null);

  useEffect(() => {
    void queryParams("get", "/sessions").then(setSupported);
    void queryParams("get", "/export").then(setExportParams);
  }, []);

  useEffect(() => rememberListLocation(props.location), [props.location]);

  // First page whenever the filters change.
  useEffect(() => {
    if (supported === null) return;
    const abort = new AbortController();
    setLoading(true);
    setError(null);
    api<SessionPage>("sessions", { query: apiQuery(filters, supported, null), signal: abort.signal })
      .then((page) => {
        loadedKey.current = key;
        setItems(page.items);
        setCursor(page.nextCursor);
        setLoading(false);
      })
      .catch((e: unknown) => {
        if (abort.signal.aborted) return;
        setError(e instanceof Error ? e : new Error(String(e)));
        setLoading(false);
      });
    return () => abort.abort();
  }, [key, supported, attempt]);

  const loadMore = (): void => {
    if (cursor === null || supported === null || loading) return;
    setLoading(true);
    api<SessionPage>("sessions", { query: apiQuery(filters, supported, cursor) })
      .then((page) => {
        setItems((old) => [...old, ...page.items]);
        setCursor(page.nextCursor);
        setLoading(false);
      })
      .catch((e: unknown) => {
        setError(e instanceof Error ? e : new Error(String(e)));
        setLoading(false);
      });
  };

  const apply = (next: ListFilters): void => navigate(href([], filterQuery(next)));

  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string): string | null => {
      const v = data.get(name);
      return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
    };
    const split = (name: string): string[] =>
      (text(name) ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    const titled = text("titled");
    apply({
      sources: split("source"),
      order: text("order") === "started" ? "started" : "last_active",
      models: split("model"),
      since: text("since"),
      until: text("until"),
      titled: titled === "yes" || titled === "no" ? titled : null,
    });
  };
  const submitOnChange = (event: Event): void => (event.currentTarget as HTMLSelectElement).form?.requestSubmit();
  const has = (name: string): boolean => supported?.has(name) === true;

  return (
    <section class="view sessions-view" aria-labelledby="sessions-heading">
      <h1 id="sessions-heading">Sessions</h1>
      <form class="filters" role="search" aria-label="Filter sessions" onSubmit={onSubmit} key={key}>
        <label>
          Source
          <input name="source" type="text" placeholder="cli, telegram…" value={filters.sources.join(", ")} autocomplete="off" />
        </label>
        {has("model") ? (
          <label>
            Model
            <input name="model" type="text" placeholder="gpt-4o…" value={filters.models.join(", ")} autocomplete="off" />
          </label>
        ) : null}
        {has("since") ? (
          <label>
            From
            <input name="since" type="date" value={filters.since ?? ""} />
          </label>
        ) : null}
        {has("until") ? (
          <label>
            To
            <input name="until" type="date" value={filters.until ?? ""} />
          </label>
        ) : null}
        {has("titled") ? (
          <label>
            Title
            <select name="titled" value={filters.titled ?? ""} onChange={submitOnChange}>
              <option value="">any</option>
              <option value="yes">titled</option>
              <option value="no">untitled</option>
            </select>
          </label>
        ) : null}
        <label>
          Sort by
          <select name="order" value={filters.order} onChange={submitOnChange}>
            <option value="last_active">last activity</option>
            <option value="started">created</option>
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      {exportParams !== null && exportParams.size > 0 ? (
        <p class="list-actions">
          <DownloadLink path="export" query={exportQuery(filters, exportParams)} filename="threadline-export.jsonl" label="Export these sessions (JSONL)" />
        </p>
      ) : null}

      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {items.length === 0 && !loading && error === null && loadedKey.current === key ? <p class="empty">No sessions match.</p> : null}

      <ol class="session-list" aria-label="Sessions" onKeyDown={onListKey}>
        {items.map((s) => (
          <li class="session-row" key={s.id} data-session-id={s.id}>
            <a class="session-link" href={href(["sessions", s.id])} onClick={onLinkClick}>
              <Untrusted class={s.title === null ? "untitled" : "title"}>{rowLabel(s)}</Untrusted>
            </a>
            <p class="meta">
              <span class="source">{s.source}</span>
              {s.model !== null ? <Untrusted class="model">{s.model}</Untrusted> : null}
              <span>{formatCount(s.messageCount)} messages</span>
              <span class="usage">
                {formatCount(s.usage.inputTokens + s.usage.outputTokens)} tokens · {formatCost(s.usage.actualCostUsd ?? s.usage.estimatedCostUsd)}
              </span>
              <span>
                {filters.order === "started" ? "created " : "active "}
                <time dateTime={isoTime(filters.order === "started" ? s.startedAt : s.lastActiveAt)}>
                  {formatTime(filters.order === "started" ? s.startedAt : s.lastActiveAt)}
                </time>
              </span>
            </p>
          </li>
        ))}
      </ol>
      {loading ? <Loading /> : null}
      {cursor !== null && !loading ? (
        <button type="button" class="load-more" onClick={loadMore}>
          Load more sessions
        </button>
      ) : null}
    </section>
  );
}
