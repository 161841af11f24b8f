/**
 * The running gateway, live (`GET /gateway/live`, server-sent events): active sessions,
 * running turns, queue depths and adapters, redrawn on each `snapshot` event — no refresh.
 * It first reads one snapshot (`GET /gateway/status`, so a missing key shows the sign-in
 * form as everywhere else), then the stream, with `fetch` and a stream reader (see
 * `event-stream.ts`: EventSource cannot send the API key). When the stream drops it reconnects (1 s, then up to 30 s
 * apart); `event: end` (the server shutting down) also reconnects. A 404 means no gateway
 * runs in this server (`threadline api`), a 403 a key scoped to a user: both are said
 * plainly and not retried.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api-client.js";
import { ErrorBox, Untrusted } from "../components.js";
import { readEventStream } from "../event-stream.js";
import { formatCount, formatTime, isoTime } from "../format.js";
import type { GatewaySnapshot } from "../ops-api-types.js";

type LiveState = "connecting" | "live" | "reconnecting" | "no-gateway" | "forbidden";

/** The live view. */
export function LiveView(): preact.JSX.Element {
  const [snapshot, setSnapshot] = useState<GatewaySnapshot | null>(null);
  const [state, setState] = useState<LiveState>("connecting");
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    let delay = 1000;
    let timer: number | undefined;
    const onSnapshot = (next: GatewaySnapshot): void => {
      setSnapshot(next);
      setState("live");
      setError(null);
      delay = 1000;
    };
    // One snapshot first through the ordinary client: a 401 shows the sign-in form like
    // every other view, and 403/404 are answered before a stream is opened.
    const connect = (): void => {
      api<GatewaySnapshot>("gateway/status", { signal: abort.signal })
        .then((first) => {
          onSnapshot(first);
          return readEventStream(
            "gateway/live",
            (event) => {
              if (event.event !== "snapshot") return;
              try {
                onSnapshot(JSON.parse(event.data) as GatewaySnapshot);
              } catch {
                // A malformed event is skipped; the next one redraws.
              }
            },
            abort.signal,
          );
        })
        .then(() => retry(null))
        .catch((e: unknown) => {
          if (abort.signal.aborted) return;
          if (e instanceof ApiError && e.needsLogin) return; // the sign-in form is shown
          if (e instanceof ApiError && e.status === 404) return setState("no-gateway");
          if (e instanceof ApiError && e.status === 403) {
            setError(e);
            return setState("forbidden");
          }
          retry(e instanceof Error ? e : new Error(String(e)));
        });
    };
    const retry = (e: Error | null): void => {
      if (abort.signal.aborted) return;
      setState("reconnecting");
      if (e !== null) setError(e);
      timer = window.setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30_000);
    };
    connect();
    return () => {
      abort.abort();
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, []);

  if (state === "no-gateway") {
    return (
      <section class="view live-view" aria-labelledby="live-heading">
        <h1 id="live-heading">Gateway live</h1>
        <p class="notice" id="live-unavailable">
          No gateway runs in this server: the live view is served by <code>threadline serve</code>. This page is served by <code>threadline api</code>, which
          stores and serves sessions but runs no agents.
        </p>
      </section>
    );
  }
  if (state === "forbidden") {
    return (
      <section class="view live-view" aria-labelledby="live-heading">
        <h1 id="live-heading">Gateway live</h1>
        <p class="notice" id="live-unavailable">
          The live view spans every tenant, so it needs an admin key (one without a <code>userId</code>). Sign out and sign in with an admin key to see it.
        </p>
        {error !== null ? <p class="note">{error.message}</p> : null}
      </section>
    );
  }

  const s = snapshot;
  return (
    <section class="view live-view" aria-labelledby="live-heading">
      <h1 id="live-heading">Gateway live</h1>
      <p class={`live-state state-${state}`} role="status" id="live-state">
        {state === "live" ? "● Live" : state === "connecting" ? "Connecting…" : "Reconnecting…"}
        {s !== null ? (
          <>
            {" · updated "}
            <time dateTime={isoTime(s.at)}>{formatTime(s.at)}</time>
            {s.accepting ? "" : " · draining for shutdown"}
          </>
        ) : null}
      </p>
      {error !== null && state === "reconnecting" ? <ErrorBox error={error} /> : null}
      {s !== null ? (
        <>
          <dl class="totals">
            <div>
              <dt>Active sessions</dt>
              <dd id="live-sessions">{formatCount(s.liveAgents)}</dd>
            </div>
            <div>
              <dt>Running turns</dt>
              <dd id="live-turns">{formatCount(s.activeTurns)}</dd>
            </div>
            <div>
              <dt>Queued messages</dt>
              <dd id="live-queued">{formatCount(s.queuedTotal)}</dd>
            </div>
            <div>
              <dt>Turns completed</dt>
              <dd id="live-completed">{formatCount(s.turnsCompleted)}</dd>
            </div>
          </dl>
          <h2>Adapters</h2>
          {s.adapters.length === 0 ? <p class="empty">No adapters.</p> : null}
          <ul class="adapters">
            {s.adapters.map((a) => (
              <li key={a.platform} class={a.connected ? "connected" : "disconnected"} data-platform={a.platform}>
                <Untrusted>{a.platform}</Untrusted>: {a.connected ? "connected" : "not connected"}
              </li>
            ))}
          </ul>
          <h2>Running sessions</h2>
          {s.runningSessions.length === 0 ? <p class="empty">None.</p> : null}
          <table class="live-table running-sessions">
            <thead>
              <tr>
                <th scope="col">Session key</th>
                <th scope="col">Platform</th>
                <th scope="col">Phase</th>
                <th scope="col">Queued</th>
              </tr>
            </thead>
            <tbody>
              {s.runningSessions.map((r) => (
                <tr key={r.key}>
                  <td>
                    <Untrusted>{r.key}</Untrusted>
                  </td>
                  <td>
                    <Untrusted>{r.platform}</Untrusted>
                  </td>
                  <td>{r.phase === "turn" ? "running a turn" : "between turns"}</td>
                  <td>{formatCount(s.queueDepths.find((q) => q.key === r.key)?.depth ?? 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {s.queueDepths.length > 0 ? (
            <>
              <h2>Queues</h2>
              <table class="live-table queues">
                <thead>
                  <tr>
                    <th scope="col">Session key</th>
                    <th scope="col">Waiting</th>
                  </tr>
                </thead>
                <tbody>
                  {s.queueDepths.map((q) => (
                    <tr key={q.key}>
                      <td>
                        <Untrusted>{q.key}</Untrusted>
                      </td>
                      <td>{formatCount(q.depth)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
