/**
 * Memory (`GET /memory`, `GET|PUT|DELETE /memory/{platform}/{userId}[/{kind}]`): what the
 * agent keeps about each person across resets (hermes-agent's `MEMORY.md` and `USER.md`).
 *
 * - {@link MemoryListView} (`/ui/memory`): the people with a memory, most recently written
 *   first, and a form to open anyone's by platform and user id.
 * - {@link MemoryPersonView} (`/ui/memory/<platform>/<userId>`): both memories of one person,
 *   each entry as plain text; **Edit** opens a textarea (one entry per block, blocks
 *   separated by a line holding only `§`, with a live count against the limit) and saves with
 *   the version read, so a write made elsewhere meanwhile is refused ("changed elsewhere,
 *   reload"); **Clear…** asks in a dialog first.
 *
 * The entries were written by the model from what people said: untrusted text. They are
 * rendered as text nodes only (never HTML, never Markdown), each in its own bidi isolate.
 * The server scopes everything: a key with a `userId` sees only that user's memories.
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api-client.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { formatCount, formatTime, isoTime } from "../format.js";
import type { MemoryKind, MemoryOwner, MemoryPage, MemoryPerson, MemoryRecord } from "../ops-api-types.js";
import { href, navigate, onLinkClick } from "../router.js";

/** The limits of each kind (as the server's; a stored record also carries its `limit`). */
const LIMITS: Record<MemoryKind, number> = { memory: 2200, user: 1375 };
const KINDS: readonly MemoryKind[] = ["memory", "user"];
const KIND_TITLE: Record<MemoryKind, string> = { memory: "Agent's notes (memory)", user: "About the person (user)" };
/** The separator line between entries in the editor (hermes' `§`). */
const SEPARATOR = "§";

/** `user 42 on telegram`, or `the gateway owner`: as plain text. */
function personLabel(owner: MemoryOwner): string {
  return owner.platform === "owner" ? "the gateway owner" : `user ${owner.userId} on ${owner.platform}`;
}

const memoryPath = (owner: MemoryOwner, kind?: MemoryKind): string =>
  ["memory", owner.platform, owner.userId, ...(kind === undefined ? [] : [kind])].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join("/");

/**
 * The entries of the editor's text: blocks separated by lines holding only `§` (spaces
 * around it allowed), each block trimmed, empty blocks dropped.
 */
export function parseEntries(text: string): string[] {
  const entries: string[] = [];
  let block: string[] = [];
  const flush = (): void => {
    const entry = block.join("\n").trim();
    if (entry !== "") entries.push(entry);
    block = [];
  };
  for (const line of text.split(/\r\n|\r|\n/u)) {
    if (line.trim() === SEPARATOR) flush();
    else block.push(line);
  }
  flush();
  return entries;
}

/** The editor's text of entries (the inverse of {@link parseEntries}). */
export function entriesText(entries: readonly string[]): string {
  return entries.join(`\n${SEPARATOR}\n`);
}

/** Characters the limit counts: code points of the entries joined by `"\n§\n"`. */
export function countChars(entries: readonly string[]): number {
  return [...entriesText(entries)].length;
}

/** The people of a list of records, in order of their newest record, with the kinds each has. */
function people(records: readonly MemoryRecord[]): Array<{ owner: MemoryOwner; records: MemoryRecord[] }> {
  const byKey = new Map<string, { owner: MemoryOwner; records: MemoryRecord[] }>();
  for (const r of records) {
    const key = JSON.stringify([r.owner.platform, r.owner.userId]);
    const person = byKey.get(key) ?? { owner: r.owner, records: [] };
    if (!person.records.some((p) => p.kind === r.kind)) person.records.push(r);
    byKey.set(key, person);
  }
  return [...byKey.values()];
}

/** The people with memories. */
export function MemoryListView(): preact.JSX.Element {
  const [records, setRecords] = useState<MemoryRecord[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(false);
  const [generation, setGeneration] = useState(0);
  const [platform, setPlatform] = useState("");
  const [userId, setUserId] = useState("");

  const load = (after: string | null, signal?: AbortSignal): void => {
    setLoading(true);
    setError(null);
    api<MemoryPage>("memory", { query: { limit: 100, cursor: after }, ...(signal === undefined ? {} : { signal }) })
      .then((page) => {
        setRecords((prev) => (after === null || prev === null ? page.items : [...prev, ...page.items]));
        setCursor(page.nextCursor);
      })
      .catch((e: unknown) => {
        if (signal?.aborted === true || (e instanceof ApiError && e.needsLogin)) return;
        setError(e instanceof Error ? e : new Error(String(e)));
      })
      .finally(() => setLoading(false));
  };

  useEffect(() => {
    const abort = new AbortController();
    load(null, abort.signal);
    return () => abort.abort();
  }, [generation]);

  const list = records === null ? [] : people(records);
  return (
    <section class="view memory-view" aria-labelledby="memory-heading">
      <h1 id="memory-heading">Memory</h1>
      <p class="note">
        What the agent keeps about each person across resets: its own notes (<code>memory</code>, hermes' MEMORY.md, 2,200 characters) and what it knows about
        the person (<code>user</code>, hermes' USER.md, 1,375 characters). The agent writes them with its <code>memory</code> tool; the text comes from
        conversations and is shown as text only.
      </p>
      <form
        class="filters memory-open"
        aria-label="Open a person's memory"
        onSubmit={(e) => {
          e.preventDefault();
          if (platform.trim() !== "" && userId.trim() !== "") navigate(href(["memory", platform.trim(), userId.trim()]));
        }}
      >
        <label>
          Platform
          <input
            name="platform"
            autocomplete="off"
            spellcheck={false}
            placeholder="telegram, owner…"
            value={platform}
            onInput={(e) => setPlatform((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          User id
          <input name="userId" autocomplete="off" spellcheck={false} value={userId} onInput={(e) => setUserId((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={platform.trim() === "" || userId.trim() === ""}>
          Open
        </button>
      </form>
      {error !== null ? <ErrorBox error={error} onRetry={() => setGeneration((n) => n + 1)} /> : null}
      {records === null && error === null ? <Loading /> : null}
      {records !== null && list.length === 0 ? (
        <p class="empty" id="memory-none">
          No memories are stored yet.
        </p>
      ) : null}
      {list.length > 0 ? (
        <table class="live-table memory-people">
          <thead>
            <tr>
              <th scope="col">Platform</th>
              <th scope="col">User id</th>
              <th scope="col">Memories</th>
              <th scope="col">Last written</th>
            </tr>
          </thead>
          <tbody>
            {list.map(({ owner, records: rs }) => (
              <tr key={`${owner.platform}\u0000${owner.userId}`} class="memory-person" data-platform={owner.platform} data-user-id={owner.userId}>
                <td>
                  <Untrusted>{owner.platform}</Untrusted>
                </td>
                <td>
                  <a href={href(["memory", owner.platform, owner.userId])} onClick={onLinkClick} aria-label={`Memory of ${personLabel(owner)}`}>
                    <Untrusted class="memory-user-id">{owner.userId}</Untrusted>
                  </a>
                </td>
                <td>
                  {KINDS.filter((k) => rs.some((r) => r.kind === k))
                    .map((k) => {
                      const r = rs.find((x) => x.kind === k)!;
                      return `${k} ${formatCount(r.chars)}/${formatCount(r.limit)}`;
                    })
                    .join(", ")}
                </td>
                <td>
                  <time dateTime={isoTime(rs[0]!.updatedAt)}>{formatTime(rs[0]!.updatedAt)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor !== null ? (
        <button type="button" class="load-more" disabled={loading} onClick={() => load(cursor)}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

/** A modal confirmation (focus moves in; Escape or Cancel closes it). */
function ConfirmDialog(props: { title: string; text: string; confirmLabel: string; onConfirm: () => Promise<void>; onClose: () => void }): preact.JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d !== null && !d.open) d.showModal();
    return () => {
      if (d?.open) d.close();
    };
  }, []);
  const confirm = (): void => {
    setBusy(true);
    setError(null);
    props
      .onConfirm()
      .then(() => dialog.current?.close())
      .catch((e: unknown) => {
        setBusy(false);
        setError(e instanceof Error ? e.message : String(e));
      });
  };
  return (
    <dialog
      ref={dialog}
      class="confirm-dialog memory-confirm"
      aria-labelledby="memory-confirm-heading"
      aria-describedby="memory-confirm-text"
      onClose={props.onClose}
    >
      <h2 id="memory-confirm-heading">
        <Untrusted>{props.title}</Untrusted>
      </h2>
      <p id="memory-confirm-text">{props.text}</p>
      {error !== null ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="dialog-buttons">
        <button type="button" class="cancel" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={confirm} disabled={busy}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** One memory of a person: its entries as text, and its editor. */
function MemoryPanel(props: {
  owner: MemoryOwner;
  kind: MemoryKind;
  record: MemoryRecord | null;
  onSaved: (record: MemoryRecord) => void;
  onCleared: () => void;
  onReload: () => void;
}): preact.JSX.Element {
  const { owner, kind, record } = props;
  const limit = record?.limit ?? LIMITS[kind];
  const [draft, setDraft] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; conflict: boolean } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [saved, setSaved] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);

  const entries = draft === null ? [] : parseEntries(draft);
  const chars = countChars(entries);
  const over = chars > limit;

  useEffect(() => {
    if (draft !== null) area.current?.focus();
  }, [draft === null]);

  const save = (): void => {
    setBusy(true);
    setError(null);
    setSaved(false);
    api<MemoryRecord>(memoryPath(owner, kind), { method: "PUT", body: { entries, expectedVersion: record?.version ?? null } })
      .then((next) => {
        props.onSaved(next);
        setDraft(null);
        setSaved(true);
        window.setTimeout(() => editButton.current?.focus(), 0);
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.needsLogin) return;
        const conflict = e instanceof ApiError && e.status === 409;
        setError({
          message: conflict
            ? "This memory was changed elsewhere since you opened it. Reload to see the current entries; your text stays in the editor."
            : e instanceof Error
              ? e.message
              : String(e),
          conflict,
        });
      })
      .finally(() => setBusy(false));
  };

  const headingId = `memory-${kind}-heading`;
  return (
    <section class={`memory-panel memory-kind-${kind}`} aria-labelledby={headingId} data-kind={kind}>
      <h2 id={headingId}>{KIND_TITLE[kind]}</h2>
      <p class="meta memory-meta">
        {record === null ? (
          <span class="memory-empty">Nothing stored.</span>
        ) : (
          <>
            <span class="memory-count">
              {formatCount(record.chars)} / {formatCount(limit)} characters
            </span>
            <span>
              {record.entries.length === 1 ? "1 entry" : `${formatCount(record.entries.length)} entries`}, version {record.version}
            </span>
            <span>
              written <time dateTime={isoTime(record.updatedAt)}>{formatTime(record.updatedAt)}</time>
            </span>
          </>
        )}
      </p>
      {record !== null && record.entries.length > 0 ? (
        <ol class="memory-entries">
          {record.entries.map((entry, i) => (
            <li key={i}>
              {/* A text node only: entries are the model's words from untrusted conversations. */}
              <pre class="memory-entry">
                <Untrusted>{entry}</Untrusted>
              </pre>
            </li>
          ))}
        </ol>
      ) : null}
      {draft !== null ? (
        <form
          class="memory-editor"
          aria-label={`Edit ${KIND_TITLE[kind]}`}
          onSubmit={(e) => {
            e.preventDefault();
            if (!over && !busy) save();
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.stopPropagation();
              setDraft(null);
              setError(null);
            }
          }}
        >
          <label for={`memory-${kind}-text`}>Entries, one per block, separated by a line with only {SEPARATOR}</label>
          <textarea
            id={`memory-${kind}-text`}
            ref={area}
            name="entries"
            rows={12}
            spellcheck={false}
            value={draft}
            aria-describedby={`memory-${kind}-chars`}
            aria-invalid={over ? "true" : undefined}
            onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
          />
          <p id={`memory-${kind}-chars`} class={over ? "memory-chars error" : "memory-chars"} aria-live="polite">
            {formatCount(chars)} / {formatCount(limit)} characters
            {over ? ` — ${formatCount(chars - limit)} over the limit: shorten or remove entries` : ""}
          </p>
          <div class="action-bar">
            <button type="submit" disabled={busy || over}>
              Save
            </button>
            <button
              type="button"
              onClick={() => {
                setDraft(null);
                setError(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div class="action-bar">
          <button
            type="button"
            ref={editButton}
            onClick={() => {
              setSaved(false);
              setError(null);
              setDraft(entriesText(record?.entries ?? []));
            }}
            aria-label={`Edit ${KIND_TITLE[kind]}`}
          >
            Edit
          </button>
          {record !== null ? (
            <button type="button" class="danger" onClick={() => setConfirming(true)} aria-label={`Clear ${KIND_TITLE[kind]}`}>
              Clear…
            </button>
          ) : null}
        </div>
      )}
      {saved ? (
        <p class="notice memory-saved" role="status">
          Saved.
        </p>
      ) : null}
      {error !== null ? (
        <div class="error memory-error" role="alert">
          <p>{error.message}</p>
          {error.conflict ? (
            <button
              type="button"
              onClick={() => {
                setError(null);
                props.onReload();
              }}
            >
              Reload
            </button>
          ) : null}
        </div>
      ) : null}
      {confirming ? (
        <ConfirmDialog
          title={`Clear ${kind === "memory" ? "the agent's notes" : "what the agent knows"} about ${personLabel(owner)}?`}
          text={`All ${record?.entries.length ?? 0} entries go. The agent no longer sees them in its next turn. This cannot be undone.`}
          confirmLabel="Clear"
          onConfirm={async () => {
            try {
              await api<void>(memoryPath(owner, kind), { method: "DELETE" });
            } catch (e) {
              if (!(e instanceof ApiError && e.status === 404)) throw e; // already gone: cleared all the same
            }
            props.onCleared();
          }}
          onClose={() => {
            setConfirming(false);
            window.setTimeout(() => editButton.current?.focus(), 0);
          }}
        />
      ) : null}
    </section>
  );
}

/** Both memories of one person. */
export function MemoryPersonView(props: { platform: string; userId: string }): preact.JSX.Element {
  const owner: MemoryOwner = { platform: props.platform, userId: props.userId };
  const [person, setPerson] = useState<Pick<MemoryPerson, "memory" | "user"> | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    api<MemoryPerson>(memoryPath(owner), { signal: abort.signal })
      .then((p) => setPerson({ memory: p.memory, user: p.user }))
      .catch((e: unknown) => {
        if (abort.signal.aborted || (e instanceof ApiError && e.needsLogin)) return;
        // Nothing stored (or not this key's to see): both empty, either can be written.
        if (e instanceof ApiError && e.status === 404) return setPerson({ memory: null, user: null });
        setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [props.platform, props.userId, generation]);

  const set = (kind: MemoryKind, record: MemoryRecord | null): void => setPerson((p) => ({ memory: null, user: null, ...p, [kind]: record }));

  return (
    <section class="view memory-person-view" aria-labelledby="memory-person-heading">
      <p>
        <a href={href(["memory"])} onClick={onLinkClick}>
          ← All memories
        </a>
      </p>
      <h1 id="memory-person-heading">
        Memory of <Untrusted class="memory-person-name">{personLabel(owner)}</Untrusted>
      </h1>
      {error !== null ? <ErrorBox error={error} onRetry={() => setGeneration((n) => n + 1)} /> : null}
      {person === null && error === null ? <Loading /> : null}
      {person !== null
        ? KINDS.map((kind) => (
            <MemoryPanel
              key={kind}
              owner={owner}
              kind={kind}
              record={person[kind]}
              onSaved={(r) => set(kind, r)}
              onCleared={() => set(kind, null)}
              onReload={() => setGeneration((n) => n + 1)}
            />
          ))
        : null}
    </section>
  );
}
