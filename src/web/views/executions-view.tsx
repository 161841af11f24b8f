/**
 * Executions (`GET /execution/history…`): the agent and workflow runs, newest update first,
 * 25 a page (offset paging with the total), filterable by agent or workflow name — the
 * filter and page are in the URL (`?agent=…` or `?workflow=…`, `&page=2`). A run's page
 * (`executions/<id>`) shows its status, final response, error, conversation and, for a
 * workflow, its steps (or graph nodes) with a link to each step's own run. Every stored
 * value is shown as text (JSON pretty-printed in folded blocks), never as HTML.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api-client.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { formatCount, formatTime, isoTime } from "../format.js";
import { href, navigate, onLinkClick, type PageLocation } from "../router.js";
import type { ExecutionPage, ExecutionRun } from "../ops-api-types.js";

const PAGE_SIZE = 25;

interface RunFilters {
  kind: "agent" | "workflow" | null;
  name: string;
  page: number;
}

function readFilters(query: URLSearchParams): RunFilters {
  const page = Number(query.get("page"));
  const agent = query.get("agent");
  const workflow = query.get("workflow");
  const kind = agent !== null && agent !== "" ? "agent" : workflow !== null && workflow !== "" ? "workflow" : null;
  return { kind, name: (kind === "agent" ? agent : workflow) ?? "", page: Number.isInteger(page) && page > 1 ? page : 1 };
}

function pageHref(f: RunFilters): string {
  return href(["executions"], { agent: f.kind === "agent" ? f.name : null, workflow: f.kind === "workflow" ? f.name : null, page: f.page > 1 ? f.page : null });
}

/** Any stored value as text: strings as they are, everything else as indented JSON. */
function asText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The runs list. */
export function ExecutionsView(props: { location: PageLocation }): preact.JSX.Element {
  const filters = readFilters(props.location.query);
  const key = JSON.stringify(filters);
  const [page, setPage] = useState<ExecutionPage | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    setPage(null);
    const query = {
      agent_name: filters.kind === "agent" ? filters.name : null,
      workflow_name: filters.kind === "workflow" ? filters.name : null,
      limit: PAGE_SIZE,
      offset: (filters.page - 1) * PAGE_SIZE,
    };
    api<ExecutionPage>("execution/history", { query, signal: abort.signal })
      .then(setPage)
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [key, attempt]);

  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(data.get("name") ?? "").trim();
    const kind = data.get("kind") === "workflow" ? "workflow" : "agent";
    navigate(pageHref({ kind: name === "" ? null : kind, name, page: 1 }));
  };
  const pages = page === null ? 1 : Math.max(1, Math.ceil(page.total / PAGE_SIZE));

  return (
    <section class="view executions-view" aria-labelledby="executions-heading">
      <h1 id="executions-heading">Executions</h1>
      <form class="filters" role="search" aria-label="Filter runs" onSubmit={onSubmit} key={key}>
        <label>
          Runs of
          <select name="kind" value={filters.kind ?? "agent"}>
            <option value="agent">agent</option>
            <option value="workflow">workflow</option>
          </select>
        </label>
        <label>
          Name
          <input name="name" type="text" value={filters.name} placeholder="all runs" autocomplete="off" />
        </label>
        <button type="submit">Apply</button>
      </form>
      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {page === null && error === null ? <Loading /> : null}
      {page !== null ? (
        <>
          <p class="note" id="executions-total">
            {formatCount(page.total)} {page.total === 1 ? "run" : "runs"}
            {filters.kind !== null ? ` of ${filters.kind} “${filters.name}”` : ""}
          </p>
          {page.items.length === 0 ? <p class="empty">No runs match.</p> : null}
          <ol class="session-list" aria-label="Runs">
            {page.items.map((run) => (
              <li class="session-row execution-row" key={run.id} data-execution-id={run.id}>
                <a class="session-link" href={href(["executions", run.id])} onClick={onLinkClick}>
                  <Untrusted>{run.name}</Untrusted>
                </a>
                <p class="meta">
                  <span class="source">{run.kind}</span>
                  <Untrusted class="run-id">{run.id}</Untrusted>
                  <span>{formatCount(run.messageCount)} messages</span>
                  {run.agentsInvolved !== null ? <span>{Object.keys(run.agentsInvolved).length} steps</span> : null}
                  <span>
                    updated <time dateTime={isoTime(run.updatedAt)}>{formatTime(run.updatedAt)}</time>
                  </span>
                </p>
              </li>
            ))}
          </ol>
          {pages > 1 ? (
            <nav class="pager" aria-label="Pages of runs">
              {filters.page > 1 ? (
                <a href={pageHref({ ...filters, page: filters.page - 1 })} onClick={onLinkClick} rel="prev">
                  Previous
                </a>
              ) : null}
              <span>
                Page {filters.page} of {pages}
              </span>
              {filters.page < pages ? (
                <a href={pageHref({ ...filters, page: filters.page + 1 })} onClick={onLinkClick} rel="next">
                  Next
                </a>
              ) : null}
            </nav>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** A folded block of stored JSON (plain text). */
function Folded(props: { label: string; value: unknown; class?: string; open?: boolean }): preact.JSX.Element {
  return (
    <details class={props.class ?? "json"} open={props.open}>
      <summary>{props.label}</summary>
      <pre>{asText(props.value)}</pre>
    </details>
  );
}

/** One run with its result. */
export function ExecutionView(props: { id: string }): preact.JSX.Element {
  const [run, setRun] = useState<ExecutionRun | null>(null);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    api<ExecutionRun>(`execution/history/${encodeURIComponent(props.id)}`, { signal: abort.signal })
      .then(setRun)
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [props.id]);

  const result = run !== null && isRecord(run.result) ? run.result : {};
  const steps = [...(Array.isArray(result["steps"]) ? result["steps"] : []), ...(Array.isArray(result["nodes"]) ? result["nodes"] : [])].filter(isRecord);

  return (
    <section class="view execution-view" aria-labelledby="execution-heading">
      <p>
        <a href={href(["executions"])} onClick={onLinkClick}>
          ← Executions
        </a>
      </p>
      {error !== null ? <ErrorBox error={error} /> : null}
      {run === null && error === null ? <Loading /> : null}
      {run !== null ? (
        <>
          <h1 id="execution-heading" tabIndex={-1}>
            <Untrusted>{run.name}</Untrusted>
          </h1>
          <p class="meta">
            <span class="source">{run.kind}</span>
            <Untrusted>{run.id}</Untrusted>
            {run.parentId !== null ? (
              <span>
                step of{" "}
                <a href={href(["executions", run.parentId])} onClick={onLinkClick}>
                  <Untrusted>{run.parentId}</Untrusted>
                </a>
              </span>
            ) : null}
            <span>
              updated <time dateTime={isoTime(run.updatedAt)}>{formatTime(run.updatedAt)}</time>
            </span>
          </p>
          <dl class="run-result">
            <dt>Status</dt>
            <dd class="run-status">{asText(result["status"] ?? "—")}</dd>
            <dt>Final response</dt>
            <dd>
              <pre class="run-final">{asText(result["finalResponse"] ?? "—")}</pre>
            </dd>
            {result["error"] !== null && result["error"] !== undefined ? (
              <>
                <dt>Error</dt>
                <dd>
                  <pre class="run-error error">{asText(result["error"])}</pre>
                </dd>
              </>
            ) : null}
          </dl>
          {steps.length > 0 ? (
            <>
              <h2>Steps</h2>
              <ol class="steps">
                {steps.map((step, i) => {
                  const sessionId = typeof step["sessionId"] === "string" ? step["sessionId"] : null;
                  const label = typeof step["node"] === "string" ? `node ${step["node"]}` : `step ${i + 1}`;
                  return (
                    <li class="step" key={sessionId ?? i} data-step-id={sessionId ?? ""}>
                      <p class="step-head">
                        <span>{label}: </span>
                        <Untrusted class="step-agent">{asText(step["agentName"] ?? "—")}</Untrusted>
                        <span class="step-status"> · {asText(step["status"] ?? "—")}</span>
                        {sessionId !== null ? (
                          <>
                            {" · "}
                            <a href={href(["executions", sessionId])} onClick={onLinkClick}>
                              <Untrusted>{sessionId}</Untrusted>
                            </a>
                          </>
                        ) : null}
                      </p>
                      <pre class="step-final">{asText(step["finalResponse"] ?? "")}</pre>
                      {Array.isArray(step["messages"]) && step["messages"].length > 0 ? (
                        <Folded label={`Conversation (${step["messages"].length} messages)`} value={step["messages"]} class="json step-messages" />
                      ) : null}
                    </li>
                  );
                })}
              </ol>
            </>
          ) : null}
          {Array.isArray(result["messages"]) && result["messages"].length > 0 ? (
            <Folded label={`Conversation (${result["messages"].length} messages)`} value={result["messages"]} class="json run-messages" />
          ) : null}
          <Folded label="The whole stored result (JSON)" value={run.result} class="json run-json" />
        </>
      ) : null}
    </section>
  );
}
