/**
 * One session's transcript: `GET /sessions/{id}` for the header and
 * `GET /sessions/{id}/messages` in pages of 100 (`after_id` keyset) loaded as the reader
 * scrolls to the end (a sentinel watched by an IntersectionObserver, plus a button).
 *
 * User and assistant text is Markdown rendered safely (markdown.ts); tool calls are folded
 * (`<details>`) with their arguments and, when loaded, their result; reasoning sits behind
 * its own toggle; every message shows its time and token count. Escape goes back to the
 * list (with its filters).
 *
 * @module
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api-client.js";
import type { Message, MessagePage, Session, ToolCall } from "../api-types.js";
import { ErrorBox, Loading, Untrusted } from "../components.js";
import { contentText, formatCost, formatCount, formatTime, isoTime } from "../format.js";
import { renderMarkdown } from "../markdown.js";
import { listLocation, navigate, onLinkClick } from "../router.js";

const PAGE_SIZE = 100;

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

function MessageItem(props: { message: Message; results: Map<string, Message> }): preact.JSX.Element {
  const m = props.message;
  const text = contentText(m.content);
  if (m.role === "tool") {
    return (
      <article class="message role-tool" aria-label="Tool result">
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
      <article class={`message role-${m.role}`} aria-label={`${m.role} message`}>
        <details>
          <summary>{m.role === "system" ? "System" : "Developer"} message</summary>
          <pre class="system-text">{text}</pre>
        </details>
        <MessageFooter message={m} />
      </article>
    );
  }
  return (
    <article class={`message role-${m.role}`} aria-label={m.role === "user" ? "User message" : "Assistant message"}>
      <header class="message-role">{m.role === "user" ? "User" : "Assistant"}</header>
      {m.reasoning !== null && m.reasoning !== "" ? (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <pre class="reasoning-text">{m.reasoning}</pre>
        </details>
      ) : null}
      {text !== "" ? <MarkdownBody text={text} /> : null}
      {(m.toolCalls ?? []).map((call, i) => (
        <ToolCallBlock key={call.id ?? i} call={call} result={call.id ? props.results.get(call.id) : undefined} />
      ))}
      <MessageFooter message={m} />
    </article>
  );
}

/** The transcript view of session `id`. */
export function TranscriptView(props: { id: string }): preact.JSX.Element {
  const { id } = props;
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

  const loadPage = async (after: number | null, signal?: AbortSignal): Promise<void> => {
    if (busy.current) return;
    busy.current = true;
    setLoading(true);
    try {
      const page = await api<MessagePage>(`sessions/${encodeURIComponent(id)}/messages`, {
        query: { limit: PAGE_SIZE, after_id: after },
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
        return loadPage(null, abort.signal);
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
      if (event.key === "Escape" && !inField) navigate(listLocation());
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

  const title = session?.title ?? session?.preview ?? id;
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
      {/* TODO(web): lineage (GET /sessions/{id}/lineage), rename, delete with preview and export links go here (later views). */}
      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      <div class="messages">
        {messages
          .filter((m) => !(m.role === "tool" && m.toolCallId !== null && results.get(m.toolCallId) === m))
          .map((m) => (
            <MessageItem key={m.id} message={m} results={results} />
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
