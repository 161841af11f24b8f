/**
 * Managing one session from its transcript: rename (an inline form; `PATCH /sessions/{id}`,
 * a title held by another session is a 409 shown in the form), delete (a modal `<dialog>`
 * listing what the delete removes and which child sessions it detaches, from
 * `GET /sessions/{id}/delete-preview`; focus moves into it and Escape cancels) and export
 * (`GET /sessions/{id}/export`, one JSON line).
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api-client.js";
import type { DeletePreview, Session } from "../api-types.js";
import { Untrusted } from "../components.js";
import { DownloadLink } from "../download-link.js";
import { formatCount } from "../format.js";
import { listLocation, navigate } from "../router.js";

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

function RenameForm(props: { session: Session; onDone: (title: string | null | undefined) => void }): preact.JSX.Element {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const value = new FormData(event.currentTarget as HTMLFormElement).get("title");
    const title = typeof value === "string" && value.trim() !== "" ? value : null;
    setBusy(true);
    setError(null);
    api<Session>(`sessions/${encodeURIComponent(props.session.id)}`, { method: "PATCH", body: { title } })
      .then((s) => props.onDone(s.title))
      .catch((e: unknown) => {
        setBusy(false);
        setError(e instanceof ApiError && e.status === 409 ? `${e.message}` : e instanceof Error ? e.message : String(e));
        input.current?.focus();
      });
  };
  return (
    <form
      class="rename-form"
      aria-label="Rename session"
      onSubmit={onSubmit}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          props.onDone(undefined);
        }
      }}
    >
      <label>
        New title
        <input
          ref={input}
          name="title"
          type="text"
          maxLength={100}
          value={props.session.title ?? ""}
          autocomplete="off"
          aria-invalid={error !== null ? "true" : undefined}
          aria-describedby={error !== null ? "rename-error" : undefined}
        />
      </label>
      <button type="submit" disabled={busy}>
        Save title
      </button>
      <button type="button" onClick={() => props.onDone(undefined)}>
        Cancel
      </button>
      {error !== null ? (
        <p id="rename-error" class="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

function DeleteDialog(props: { session: Session; onClose: () => void }): preact.JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const [preview, setPreview] = useState<DeletePreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = props.session.id;

  useEffect(() => {
    const d = dialog.current;
    if (d !== null && !d.open) d.showModal(); // modal: focus moves in, Escape fires "cancel"
    const abort = new AbortController();
    api<DeletePreview>(`sessions/${encodeURIComponent(id)}/delete-preview`, { signal: abort.signal })
      .then(setPreview)
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      abort.abort();
      if (d?.open) d.close();
    };
  }, [id]);

  const confirm = (): void => {
    setBusy(true);
    setError(null);
    api<void>(`sessions/${encodeURIComponent(id)}`, { method: "DELETE" })
      .then(() => {
        dialog.current?.close();
        navigate(listLocation());
      })
      .catch((e: unknown) => {
        setBusy(false);
        setError(e instanceof Error ? e.message : String(e));
      });
  };

  const name = preview?.session.title ?? props.session.title ?? id;
  return (
    <dialog ref={dialog} class="confirm-dialog" aria-labelledby="delete-heading" aria-describedby="delete-details" onClose={props.onClose}>
      <h2 id="delete-heading">
        Delete “<Untrusted>{name}</Untrusted>”?
      </h2>
      <div id="delete-details" class="delete-preview">
        {preview === null && error === null ? <p role="status">Checking what the delete removes…</p> : null}
        {preview !== null ? (
          <>
            <p class="removes">
              This removes {plural(preview.removes.sessions, "session", "sessions")} and {plural(preview.removes.messages, "message", "messages")}. It cannot be
              undone.
            </p>
            {preview.detaches.length > 0 || preview.detachedOthers > 0 ? (
              <>
                <p class="detaches">
                  {plural(preview.detaches.length + preview.detachedOthers, "child session is", "child sessions are")} kept and detached (they become sessions
                  of their own):
                </p>
                <ul class="detached-list">
                  {preview.detaches.map((c) => (
                    <li key={c.id}>
                      <Untrusted class={c.title === null ? "untitled" : "title"}>{c.title ?? c.id}</Untrusted> ({c.source},{" "}
                      {plural(c.messageCount, "message", "messages")})
                    </li>
                  ))}
                  {preview.detachedOthers > 0 ? <li>{plural(preview.detachedOthers, "session", "sessions")} of other users</li> : null}
                </ul>
              </>
            ) : (
              <p class="detaches">No other session is affected.</p>
            )}
          </>
        ) : null}
        {error !== null ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
      <div class="dialog-buttons">
        <button type="button" class="cancel" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={confirm} disabled={preview === null || busy}>
          Delete session
        </button>
      </div>
    </dialog>
  );
}

/** Rename, delete and export buttons of a session; `onRenamed` gets the stored title. */
export function SessionActions(props: { session: Session; onRenamed: (title: string | null) => void }): preact.JSX.Element {
  const [mode, setMode] = useState<"idle" | "rename" | "delete">("idle");
  const renameButton = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const back = (target: typeof renameButton): void => {
    setMode("idle");
    window.setTimeout(() => target.current?.focus(), 0);
  };
  return (
    <div class="session-actions">
      {mode === "rename" ? (
        <RenameForm
          session={props.session}
          onDone={(title) => {
            if (title !== undefined) props.onRenamed(title);
            back(renameButton);
          }}
        />
      ) : (
        <div class="action-bar">
          <button type="button" ref={renameButton} onClick={() => setMode("rename")}>
            Rename
          </button>
          <button type="button" class="danger" ref={deleteButton} onClick={() => setMode("delete")}>
            Delete…
          </button>
          <DownloadLink
            path={`sessions/${encodeURIComponent(props.session.id)}/export`}
            filename={`${props.session.id.replace(/[^\w.-]/gu, "_")}.jsonl`}
            label="Export JSONL"
          />
        </div>
      )}
      {mode === "delete" ? <DeleteDialog session={props.session} onClose={() => back(deleteButton)} /> : null}
    </div>
  );
}
