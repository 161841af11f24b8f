/**
 * Titles of new sessions: after the first exchange of an untitled session, a `Titler`
 * proposes a title in the background (a turn never waits for it). A title someone set
 * meanwhile (`/title`) wins; an unrelated session with the same title makes this one
 * `title (2)`.
 *
 * @module
 */
import type { Titler } from "../agents/index.js";
import { setTitleAvoidingCollision, type ConversationMessage } from "../store/index.js";
import type { GatewayLogger } from "./gateway-logger.js";
import type { SessionEntry } from "./session-entry.js";
import type { GatewayDB } from "./session-router.js";
import { textOf } from "./turn-messages.js";

/** The background titles of one gateway. */
export class SessionTitles {
  readonly #db: GatewayDB;
  readonly #titler: Titler | null;
  readonly #log: GatewayLogger;
  /** Auto-titles running in the background (they never hold up a turn). */
  readonly #titles = new Set<Promise<void>>();
  readonly #titleAbort = new AbortController();

  constructor(db: GatewayDB, titler: Titler | null, log: GatewayLogger) {
    this.#db = db;
    this.#titler = titler;
    this.#log = log;
  }

  /** Titles an untitled session after its first exchange, in the background: the turn (and the next one) never waits for it. */
  titleInBackground(entry: SessionEntry, history: ConversationMessage[], reply: string): void {
    if (this.#titler === null || this.#titleAbort.signal.aborted) return;
    const users = history.filter((m) => m.role === "user");
    if (users.length !== 1 || history.length > 2) return;
    const running: Promise<void> = this.#maybeTitle(entry, textOf(users[0]!.content), reply).finally(() => this.#titles.delete(running));
    this.#titles.add(running);
  }

  /** Resolves once the titles running now have settled. */
  settled(): Promise<unknown> {
    return Promise.all([...this.#titles]);
  }

  /** Aborts the titles still running (they write nothing once aborted) and starts no more; resolves once they settled. */
  stop(): Promise<unknown> {
    this.#titleAbort.abort();
    return this.settled();
  }

  async #maybeTitle(entry: SessionEntry, userText: string, reply: string): Promise<void> {
    if (this.#titler === null) return;
    try {
      const session = await this.#db.getSession(entry.sessionId);
      if (session === null || session.title !== null) return;
      const proposed = await this.#titler.proposeTitle({ userText, replyText: reply, signal: this.#titleAbort.signal });
      if (proposed === null || proposed.trim() === "" || this.#titleAbort.signal.aborted) return;
      // Someone may have named the session (`/title`) while the titler was thinking: theirs wins.
      if ((await this.#db.getSession(entry.sessionId))?.title !== null) return;
      // An unrelated session holding the same title makes this one "title (2)": `#N` is for continuations.
      await setTitleAvoidingCollision(this.#db, entry.sessionId, proposed, "unrelated");
    } catch (error) {
      this.#log.warn({ err: error, sessionId: entry.sessionId }, "titling failed");
    }
  }
}
