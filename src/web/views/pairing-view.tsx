/**
 * Pairing (`GET /pairing`, `POST /pairing/approve`, `DELETE /pairing/{platform}/{userId}`):
 * the pending pairing codes (who asked, when the code expires) with an Approve button each,
 * a form to approve a code a person sent you, and the approved people with a Revoke button
 * each. Names and ids come from strangers: they are rendered as text (never HTML), each in
 * its own bidi isolate. The routes span every tenant: a key scoped to a user gets 403, and
 * the view says it needs an admin key and shows no data.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api-client.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { formatTime, isoTime } from "../format.js";
import type { PairingApproval, PairingList } from "../ops-api-types.js";

/** The chat platforms pairing applies to (as the server's `platform` enum). */
const PLATFORMS = ["telegram", "slack", "discord", "whatsapp", "signal", "matrix"] as const;

/** `Ann (user 42)`, or `user 42` without a name: as plain text. */
function person(userId: string, userName: string | null): string {
  return userName === null || userName.trim() === "" ? `user ${userId}` : `${userName} (user ${userId})`;
}

/** Minutes until `at` (epoch seconds) as `in 42m`. */
function expiresIn(at: number): string {
  const minutes = Math.max(0, Math.round((at - Date.now() / 1000) / 60));
  return minutes >= 60 ? `in ${Math.floor(minutes / 60)}h${minutes % 60 === 0 ? "" : ` ${minutes % 60}m`}` : `in ${minutes}m`;
}

/** The pairing view. */
export function PairingView(): preact.JSX.Element {
  const [list, setList] = useState<PairingList | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [forbidden, setForbidden] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [actionError, setActionError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [generation, setGeneration] = useState(0);
  const [platform, setPlatform] = useState<string>(PLATFORMS[0]);
  const [code, setCode] = useState("");

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    api<PairingList>("pairing", { signal: abort.signal })
      .then((next) => setList(next))
      .catch((e: unknown) => {
        if (abort.signal.aborted) return;
        if (e instanceof ApiError && e.needsLogin) return; // the sign-in form is shown
        if (e instanceof ApiError && e.status === 403) return setForbidden(true);
        setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [generation]);

  const act = async (run: () => Promise<string>): Promise<void> => {
    setBusy(true);
    setDone(null);
    setActionError(null);
    try {
      setDone(await run());
    } catch (e) {
      if (!(e instanceof ApiError && e.needsLogin)) setActionError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setBusy(false);
      setGeneration((n) => n + 1);
    }
  };

  const approve = (onPlatform: string, typed: string): Promise<void> =>
    act(async () => {
      const reply = await api<{ approved: PairingApproval }>("pairing/approve", { method: "POST", body: { platform: onPlatform, code: typed } });
      setCode("");
      return `Approved ${person(reply.approved.userId, reply.approved.userName)} on ${reply.approved.platform}. Their next message will be answered.`;
    });

  const revoke = (a: PairingApproval): Promise<void> =>
    act(async () => {
      await api<void>(`pairing/${encodeURIComponent(a.platform)}/${encodeURIComponent(a.userId)}`, { method: "DELETE" });
      return `Revoked ${person(a.userId, a.userName)} on ${a.platform}: their next message is treated as a stranger's.`;
    });

  if (forbidden) {
    return (
      <section class="view pairing-view" aria-labelledby="pairing-heading">
        <h1 id="pairing-heading">Pairing</h1>
        <p class="notice" id="pairing-unavailable">
          Pairing decides who may talk to the agent on every platform, so it needs an admin key (one without a <code>userId</code>). Sign out and sign in with
          an admin key to see it.
        </p>
      </section>
    );
  }

  return (
    <section class="view pairing-view" aria-labelledby="pairing-heading">
      <h1 id="pairing-heading">Pairing</h1>
      <p class="note">
        A stranger who writes to the bot gets a one-time code and no answer. When they send you the code, approve it here (or with{" "}
        <code>threadline pairing approve</code>). Codes expire after an hour; 5 failed approvals lock a platform's approvals for an hour.
      </p>
      <form
        class="filters pairing-approve"
        aria-label="Approve a code"
        onSubmit={(e) => {
          e.preventDefault();
          if (code.trim() !== "") void approve(platform, code);
        }}
      >
        <label>
          Platform
          <select name="platform" value={platform} onChange={(e) => setPlatform((e.currentTarget as HTMLSelectElement).value)}>
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Code
          <input name="code" autocomplete="off" spellcheck={false} value={code} onInput={(e) => setCode((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy || code.trim() === ""}>
          Approve code
        </button>
      </form>
      {done !== null ? (
        <p class="notice" role="status" id="pairing-result">
          <Untrusted>{done}</Untrusted>
        </p>
      ) : null}
      {actionError !== null ? <ErrorBox error={actionError} /> : null}
      {error !== null ? <ErrorBox error={error} onRetry={() => setGeneration((n) => n + 1)} /> : null}
      {list === null && error === null ? <Loading /> : null}
      {list !== null ? (
        <>
          <h2>Pending codes</h2>
          {list.pending.length === 0 ? (
            <p class="note" id="pairing-no-pending">
              No pending codes.
            </p>
          ) : (
            <table class="live-table pairing-pending">
              <thead>
                <tr>
                  <th scope="col">Platform</th>
                  <th scope="col">Code</th>
                  <th scope="col">User id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Asked</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {list.pending.map((p) => (
                  <tr key={`${p.platform}:${p.code}`} class="pairing-request" data-user-id={p.userId}>
                    <td>{p.platform}</td>
                    <td>
                      <code>{p.code}</code>
                    </td>
                    <td>
                      <Untrusted class="pairing-user-id">{p.userId}</Untrusted>
                    </td>
                    <td>
                      <Untrusted class="pairing-user-name">{p.userName ?? "-"}</Untrusted>
                    </td>
                    <td>
                      <time dateTime={isoTime(p.createdAt)}>{formatTime(p.createdAt)}</time>
                    </td>
                    <td>
                      <time dateTime={isoTime(p.expiresAt)}>{expiresIn(p.expiresAt)}</time>
                    </td>
                    <td>
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => void approve(p.platform, p.code)}
                        aria-label={`Approve ${person(p.userId, p.userName)} on ${p.platform}`}
                      >
                        Approve
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Approved people</h2>
          {list.approved.length === 0 ? (
            <p class="note" id="pairing-no-approved">
              No one is approved yet.
            </p>
          ) : (
            <table class="live-table pairing-approved">
              <thead>
                <tr>
                  <th scope="col">Platform</th>
                  <th scope="col">User id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Approved</th>
                  <th scope="col">By</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {list.approved.map((a) => (
                  <tr key={`${a.platform}:${a.userId}`} class="pairing-approval" data-user-id={a.userId}>
                    <td>{a.platform}</td>
                    <td>
                      <Untrusted class="pairing-user-id">{a.userId}</Untrusted>
                    </td>
                    <td>
                      <Untrusted class="pairing-user-name">{a.userName ?? "-"}</Untrusted>
                    </td>
                    <td>
                      <time dateTime={isoTime(a.approvedAt)}>{formatTime(a.approvedAt)}</time>
                    </td>
                    <td>{a.approvedBy ?? "-"}</td>
                    <td>
                      <button
                        type="button"
                        class="danger"
                        disabled={busy}
                        onClick={() => void revoke(a)}
                        aria-label={`Revoke ${person(a.userId, a.userName)} on ${a.platform}`}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : null}
    </section>
  );
}
