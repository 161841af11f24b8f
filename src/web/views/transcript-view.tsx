/**
 * One session's transcript: `GET /sessions/{id}` for the header and
 * `GET /sessions/{id}/messages` in pages of 100 (`after_id` keyset) loaded as the reader
 * scrolls to the end (a sentinel watched by an IntersectionObserver, plus a button).
 *
 * User and assistant text is Markdown rendered safely (markdown.ts); tool calls are folded
 * (`<details>`) with their arguments and, when loaded, their result; attachments (photos,
 * voice notes, files) show under the text (attachment-view.tsx); reasoning sits behind
 * its own toggle; every message shows its time and token count. Escape goes back to the
 * list (with its filters).
 *
 * `?message=<id>` (a search hit) opens the transcript at that message: pages load until it
 * is there, then it is scrolled into view, marked and focused. The lineage panel and the
 * rename / delete / export actions sit under the header.
 *
 * @module
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, type ApiError } from "../api-client.js";
import type { Message, MessagePage, Session, ToolCall } from "../api-types.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { contentText, formatCost, formatCount, formatTime, isoTime } from "../format.js";
import { renderMarkdown } from "../markdown.js";
import { summarisedSession, syntheticMessageBody, syntheticMessageKind } from "../message-origin.js";
import { listLocation, navigate, onLinkClick } from "../router.js";
import { Attachments } from "./attachment-view.js";
import { LineagePanel } from "./lineage-panel.js";
import { SessionActions } from "./session-actions.js";

const PAGE_SIZE = 100;
/** Page size while looking for a linked message (`?message=`): fewer round trips. */
const SEEK_PAGE_SIZE = 500;

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Markdown as sanitised HTML (the only HTML the page ever inserts; see markdown.ts). */
function MarkdownBody(props: { text: string }): preact.JSX.Element {
  const html = useMemo(() => renderMarkdown(props.text), [props.text]);
  return <div class="markdown" dir="auto" dangerouslySetInnerHTML={{ __html: html }} />;
}

function ToolCallBlock(props: { call: ToolCall; result: Message | undefined }): preact.JSX.Element {
  const { call, result } = props;
  return (
    <details class="tool-call">
      <summary>
        Tool call: <Untrusted class="tool-name">{call.function?.name ?? "(unnamed)"}</Untrusted>
        {result === undefined ? null : " · result"}
      </summary>
      <h4>Arguments</h4>
      <pre class="tool-args">{prettyJson(call.function?.arguments ?? "")}</pre>
      {result !== undefined ? (
        <>
          <h4>Result</h4>
          <pre class="tool-result">{contentText(result.content)}</pre>
        </>
      ) : null}
    </details>
  );
}

function MessageFooter(props: { message: Message }): preact.JSX.Element {
  const m = props.message;
  return (
    <footer class="message-meta">
      <time dateTime={isoTime(m.timestamp)}>{formatTime(m.timestamp)}</time>
      {m.tokenCount !== null ? <span class="tokens">{formatCount(m.tokenCount)} tokens</span> : null}
      {m.rewoundAt !== null ? <span>rewound</span> : null}
    </footer>
  );
}

function MessageItem(props: { message: Message; results: Map<string, Message>; target?: boolean }): preact.JSX.Element {
  const m = props.message;
  const text = contentText(m.content);
  const mark: { class: string; tabIndex?: number } = props.target === true ? { class: "message-target", tabIndex: -1 } : { class: "" };
  if (m.role === "tool") {
    return (
      <article class={`message role-tool ${mark.class}`} aria-label="Tool result" data-message-id={m.id} tabIndex={mark.tabIndex}>
        <details class="tool-call orphan-result">
          <summary>
            Tool result{m.toolName !== null ? ": " : ""}
            {m.toolName !== null ? <Untrusted class="tool-name">{m.toolName}</Untrusted> : null}
          </summary>
          <pre class="tool-result">{text}</pre>
        </details>
        <MessageFooter message={m} />
      </article>
    );
  }
  if (m.role === "system" || m.role === "developer") {
    return (
      <article class={`message role-${m.role} ${mark.class}`} aria-label={`${m.role} message`} data-message-id={m.id} tabIndex={mark.tabIndex}>
        <details>
          <summary>{m.role === "system" ? "System" : "Developer"} message</summary>
          <pre class="system-text">{text}</pre>
        </details>
        <MessageFooter message={m} />
      </article>
    );
  }
  const synthetic = syntheticMessageKind(m);
  if (synthetic !== null) {
    // A user turn for the model that no user typed: a compression summary or a handoff's note.
    const label = synthetic === "summary" ? "Summary of the earlier conversation" : "System note";
    const body = syntheticMessageBody(synthetic, text);
    return (
      <article class={`message role-${synthetic} ${mark.class}`} aria-label={label} data-message-id={m.id} tabIndex={mark.tabIndex}>
        <header class="message-role">
          {label}
          {synthetic === "summary" ? (
            <>
              {" ("}
              <Untrusted>{summarisedSession(m.platformMessageId!)}</Untrusted>
              {")"}
            </>
          ) : null}
        </header>
        {body !== "" ? <MarkdownBody text={body} /> : null}
        <MessageFooter message={m} />
      </article>
    );
  }
  return (
    <article
      class={`message role-${m.role} ${mark.class}`}
      aria-label={m.role === "user" ? "User message" : "Assistant message"}
      data-message-id={m.id}
      tabIndex={mark.tabIndex}
    >
      <header class="message-role">{m.role === "user" ? "User" : "Assistant"}</header>
      {m.reasoning !== null && m.reasoning !== "" ? (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <pre class="reasoning-text">{m.reasoning}</pre>
        </details>
      ) : null}
      {text !== "" ? <MarkdownBody text={text} /> : null}
      <Attachments sessionId={m.sessionId} content={m.content} />
      {(m.toolCalls ?? []).map((call, i) => (
        <ToolCallBlock key={call.id ?? i} call={call} result={call.id ? props.results.get(call.id) : undefined} />
      ))}
      <MessageFooter message={m} />
    </article>
  );
}

/** The transcript view of session `id`. */
export function TranscriptView(props: { id: string; message?: string | null }): preact.JSX.Element {
  const { id } = props;
  const targetParam = Number(props.message ?? "");
  const target = Number.isInteger(targetParam) && targetParam > 0 ? targetParam : null;
  const [session, setSession] = useState<Session | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [nextAfterId, setNextAfterId] = useState<number | null>(null);
  const [done, setDone] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [attempt, setAttempt] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const busy = useRef(false);
  const shownTarget = useRef<number | null>(null);

  const loadPage = async (after: number | null, signal?: AbortSignal, limit = PAGE_SIZE): Promise<void> => {
    if (busy.current) return;
    busy.current = true;
    setLoading(true);
    try {
      const page = await api<MessagePage>(`sessions/${encodeURIComponent(id)}/messages`, {
        query: { limit, after_id: after },
        ...(signal ? { signal } : {}),
      });
      setMessages((old) => (after === null ? page.items : [...old, ...page.items]));
      setNextAfterId(page.nextAfterId);
      setDone(page.nextAfterId === null);
    } catch (e) {
      if (!signal?.aborted) setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      busy.current = false;
      setLoading(false);
    }
  };

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    setSession(null);
    setMessages([]);
    setDone(false);
    busy.current = false;
    api<Session>(`sessions/${encodeURIComponent(id)}`, { signal: abort.signal })
      .then((s) => {
        setSession(s);
        heading.current?.focus();
        return loadPage(null, abort.signal, target !== null ? SEEK_PAGE_SIZE : PAGE_SIZE);
      })
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [id, attempt]);

  // Next page when the end of the transcript scrolls into view.
  useEffect(() => {
    const target = sentinel.current;
    if (target === null || done || nextAfterId === null || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadPage(nextAfterId);
    });
    observer.observe(target);
    return () => observer.disconnect();
  }, [nextAfterId, done]);

  // Escape: back to the list (not while typing in a field).
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      const inField = event.target instanceof HTMLElement && /^(INPUT|TEXTAREA|SELECT)$/u.test(event.target.tagName);
      // An open dialog takes Escape for itself (it closes the dialog).
      if (event.key === "Escape" && !inField && !event.defaultPrevented && document.querySelector("dialog[open]") === null) navigate(listLocation());
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // Tool results shown inside their call (the rest are shown on their own).
  const results = useMemo(() => {
    const calls = new Set(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
    const map = new Map<string, Message>();
    for (const m of messages) if (m.role === "tool" && m.toolCallId !== null && calls.has(m.toolCallId)) map.set(m.toolCallId, m);
    return map;
  }, [messages]);

  // The article showing the linked message: itself, or the call that holds a folded tool result.
  const targetArticle = useMemo(() => {
    if (target === null) return null;
    const m = messages.find((x) => x.id === target);
    if (m === undefined) return null;
    if (m.role === "tool" && m.toolCallId !== null && results.get(m.toolCallId) === m) {
      return messages.find((x) => (x.toolCalls ?? []).some((c) => c.id === m.toolCallId))?.id ?? m.id;
    }
    return m.id;
  }, [messages, results, target]);

  // Linked message: load pages until it is there (bounded by the transcript's pages), then show it.
  useEffect(() => {
    if (target === null || loading || error !== null || busy.current) return;
    if (targetArticle === null) {
      if (!done && nextAfterId !== null) void loadPage(nextAfterId, undefined, SEEK_PAGE_SIZE);
      return;
    }
    if (shownTarget.current === target) return;
    shownTarget.current = target;
    const el = document.querySelector<HTMLElement>(`article[data-message-id="${targetArticle}"]`);
    el?.scrollIntoView({ block: "center" });
    el?.focus({ preventScroll: true });
  }, [target, targetArticle, loading, done, nextAfterId, error]);

  const title = session?.title ?? session?.preview ?? id;
  const missingTarget = target !== null && done && !loading && targetArticle === null && session !== null && error === null;
  return (
    <section class="view transcript-view" aria-labelledby="transcript-heading">
      <p class="back">
        <a href={listLocation()} onClick={onLinkClick}>
          ← Sessions
        </a>
      </p>
      <h1 id="transcript-heading" tabIndex={-1} ref={heading}>
        <Untrusted>{title}</Untrusted>
      </h1>
      {session !== null ? (
        <p class="meta session-meta">
          <span class="source">{session.source}</span>
          {session.model !== null ? <Untrusted class="model">{session.model}</Untrusted> : null}
          <span>{formatCount(session.messageCount)} messages</span>
          <span>
            {formatCount(session.usage.inputTokens + session.usage.outputTokens)} tokens ·{" "}
            {formatCost(session.usage.actualCostUsd ?? session.usage.estimatedCostUsd)}
          </span>
          <span>
            started <time dateTime={isoTime(session.startedAt)}>{formatTime(session.startedAt)}</time>
          </span>
        </p>
      ) : null}
      {session !== null ? <SessionActions session={session} onRenamed={(t) => setSession({ ...session, title: t })} /> : null}
      {session !== null ? <LineagePanel id={id} /> : null}
      {missingTarget ? (
        <p class="error" role="alert">
          The linked message is not in this transcript (it may have been rewound or deleted).
        </p>
      ) : null}
      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      <div class="messages">
        {messages
          .filter((m) => !(m.role === "tool" && m.toolCallId !== null && results.get(m.toolCallId) === m))
          .map((m) => (
            <MessageItem key={m.id} message={m} results={results} target={m.id === targetArticle} />
          ))}
      </div>
      <div ref={sentinel} class="sentinel" aria-hidden="true" />
      {loading ? <Loading label="Loading messages…" /> : null}
      {!done && !loading && nextAfterId !== null ? (
        <button type="button" class="load-more" onClick={() => void loadPage(nextAfterId)}>
          Load more messages
        </button>
      ) : null}
      {done && messages.length > 0 ? <p class="end">End of transcript.</p> : null}
      {done && messages.length === 0 && error === null ? <p class="empty">No messages.</p> : null}
    </section>
  );
}
