/**
 * What every framework bridge does with the session behind a conversation: create it on first
 * write (with the bridge's source, an optional title, parent and owner), title it after its
 * first exchange (a taken title gets its collision form `t (2)`; a child taking its parent's title the next lineage number `t #2`), as the gateway does.
 *
 * Shared by the bridges under src/bridges/; not an entry point.
 *
 * @module
 */
import type { Titler } from "../agents/index.js";
import { HeuristicTitler } from "../agents/index.js";
import {
  ConflictError,
  parseLineageTitle,
  sanitizeTitle,
  setTitleAvoidingCollision,
  type TitleRelation,
  type MessageContent,
  type NewMessage,
  type Session,
  type SessionHistory,
} from "../store/index.js";

/** How many leading messages are read to find the first exchange. */
const FIRST_EXCHANGE_WINDOW = 50;

/** The store methods a {@link SessionBinding} uses. */
export type BindingStore = Pick<SessionHistory, "getSession" | "createSession" | "getMessages" | "setTitle" | "nextTitleInLineage" | "freeTitle">;

/** How a bridge creates the session of a conversation it writes first. */
export interface SessionBindingOptions {
  /** `Session.source` of the sessions it creates (each bridge has its default: `ai-sdk`, `langchain`). */
  source: string;
  /**
   * Title of a session it creates; a title another session holds gets its collision form (`t (2)`).
   * Default: a child of a titled parent takes the parent's next lineage title (as a compression
   * continuation does); otherwise the `titler` names the session after its first exchange.
   */
  title?: string | null;
  /** The session a created session continues or branches from (must exist). */
  parentSessionId?: string | null;
  /** `Session.userId` of a created session (the tenant, for scoped API keys and `userId` filters). */
  userId?: string | null;
  /** `Session.model` of a created session. */
  model?: string | null;
  /** `Session.systemPrompt` of a created session. */
  systemPrompt?: string | null;
  /**
   * Titles an untitled session after its first exchange (a user message and a reply), as the
   * gateway does (default: the heuristic titler, no model call); `null`: never.
   */
  titler?: Titler | null;
}

/** The session of a conversation, created on first write; titling after the first exchange. */
export class SessionBinding {
  readonly #db: BindingStore;
  readonly #options: SessionBindingOptions;
  readonly #titler: Titler | null;

  constructor(db: BindingStore, options: SessionBindingOptions) {
    this.#db = db;
    this.#options = options;
    this.#titler = options.titler === undefined ? new HeuristicTitler() : options.titler;
  }

  /** The session `id`, created with the binding's fields when missing (a concurrent creator wins quietly). */
  async ensure(id: string, overrides: Partial<Omit<SessionBindingOptions, "source" | "titler">> = {}): Promise<Session> {
    const existing = await this.#db.getSession(id);
    if (existing !== null) return existing;
    const o = { ...this.#options, ...overrides };
    let created: Session;
    try {
      created = await this.#db.createSession({
        id,
        source: o.source,
        parentSessionId: o.parentSessionId ?? null,
        userId: o.userId ?? null,
        model: o.model ?? null,
        systemPrompt: o.systemPrompt ?? null,
      });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const raced = await this.#db.getSession(id);
      if (raced === null) throw error;
      return raced;
    }
    let title = o.title ?? null;
    // A child titled like its parent continues it (`t #2`); any other title another session holds
    // is an unrelated collision (`t (2)`).
    let relation: TitleRelation = "unrelated";
    if (o.parentSessionId) {
      const parentTitle = (await this.#db.getSession(o.parentSessionId))?.title ?? null;
      if (title === null || title.trim() === "") title = parentTitle;
      // The child of a session titled like it (through a real parent link) continues its lineage.
      if (title !== null && parentTitle !== null && sameLineage(title, parentTitle)) relation = "continuation";
    }
    if (title !== null && title.trim() !== "") {
      await setTitleAvoidingCollision(this.#db, id, title, relation);
      return (await this.#db.getSession(id)) ?? created;
    }
    return created;
  }

  /**
   * Titles the session when it is untitled, `written` holds a reply, and the session's first
   * messages hold exactly one user message (its first exchange). A titler that throws is
   * ignored (the transcript is stored already; a title is a nicety); store errors are not.
   */
  async titleAfterFirstExchange(id: string, written: readonly NewMessage[]): Promise<void> {
    if (this.#titler === null || !written.some((m) => m.role === "assistant")) return;
    const session = await this.#db.getSession(id);
    if (session === null || session.title !== null) return;
    const head = await this.#db.getMessages(id, { limit: FIRST_EXCHANGE_WINDOW });
    const users = head.filter((m) => m.role === "user");
    if (users.length !== 1) return;
    const replyText = written
      .filter((m) => m.role === "assistant")
      .map((m) => textOf(m.content))
      .join("\n");
    let proposed: string | null;
    try {
      proposed = await this.#titler.proposeTitle({ userText: textOf(users[0]!.content), replyText });
    } catch {
      return;
    }
    if (proposed === null || proposed.trim() === "") return;
    // Someone may have named the session while the titler was thinking: theirs wins.
    if ((await this.#db.getSession(id))?.title !== null) return;
    await setTitleAvoidingCollision(this.#db, id, proposed, "unrelated");
  }
}

/** Whether two titles are of one lineage (`t`, `t #2`, …), after sanitising. */
function sameLineage(a: string, b: string): boolean {
  const clean = (t: string): string | null => {
    try {
      const c = sanitizeTitle(t);
      return c === null ? null : parseLineageTitle(c).base;
    } catch {
      return null;
    }
  };
  const base = clean(a);
  return base !== null && base === clean(b);
}

/** The text parts of a content, joined with newlines. */
function textOf(content: MessageContent | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : [])).join("\n");
}
