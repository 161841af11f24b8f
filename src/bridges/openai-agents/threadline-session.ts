/**
 * {@link ThreadlineSession}: the OpenAI Agents SDK `Session` interface over a Threadline store.
 *
 * @module
 */
import type { AgentInputItem, Session as AgentSession } from "@openai/agents";
import type { Titler } from "../../agents/index.js";
import { InvalidInputError, NotFoundError, newSessionId, type SessionHistory } from "../../store/index.js";
import { SessionBinding } from "../session-binding.js";
import { itemToMessage, messageToItems } from "./agent-item-mapping.js";

/** The `source` of the sessions a {@link ThreadlineSession} creates, unless told otherwise. */
export const OPENAI_AGENTS_SOURCE = "openai-agents";

/** Largest window the store reads by `lastMessages`; a larger `limit` reads the whole transcript. */
const MAX_WINDOW = 100_000;

/** The store roles a {@link ThreadlineSession} uses. */
export type ThreadlineSessionDB = Pick<
  SessionHistory,
  | "createSession"
  | "getSession"
  | "appendTurn"
  | "getMessages"
  | "rewindMessages"
  | "clearMessages"
  | "replaceMessages"
  | "setTitle"
  | "nextTitleInLineage"
  | "freeTitle"
>;

/** Options of {@link ThreadlineSession}. */
export interface ThreadlineSessionOptions {
  /**
   * The Threadline session to use: an existing one is continued (whatever its source), a
   * missing one is created with this id on the first write. Default: a new id
   * (`YYYYMMDD_HHMMSS_<8 hex>`).
   */
  sessionId?: string;
  /** `source` of a session this creates (default `"openai-agents"`). */
  source?: string;
  /**
   * Title of a session this creates; when another session holds it, its first free collision form
   * (`title (2)`, …). Default: a child of a titled parent takes the parent's next
   * lineage title, otherwise the `titler` names the session after its first exchange.
   */
  title?: string | null;
  /** The session a new session continues or branches from (must exist); shown as its parent in lineage. */
  parentSessionId?: string | null;
  /** Owner of a session this creates (`Session.userId`: listing, search and API keys filter by it). */
  userId?: string | null;
  /** Model name recorded on a session this creates. */
  model?: string | null;
  /** System prompt recorded on a session this creates (the SDK's agent instructions are not stored otherwise). */
  systemPrompt?: string | null;
  /**
   * Names an untitled session after its first exchange (first user text, first assistant
   * reply), once per `ThreadlineSession`, best effort: a failing titler leaves it untitled.
   * Default: `HeuristicTitler` (no model call); `null`: never.
   */
  titler?: Titler | null;
}

/** Per store, per session id: the tail of the operations queued on that session in this process. */
const queues = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * An OpenAI Agents SDK `Session` (`run(agent, input, { session })`) that keeps the history in a
 * Threadline store, as one message per SDK item. Sessions it creates have source
 * `openai-agents` and show in the CLI, search and the web page like any other; items read back
 * deep-equal the items written (see docs/api.md, "OpenAI Agents SDK").
 *
 * - `getItems(limit)`: the latest `limit` items, oldest first, read as a bounded window;
 *   without `limit`, every item (the SDK reads the whole history before each run).
 * - `addItems(items)`: appends them in one transaction (all or none).
 * - `popItem()`: soft-deletes the latest item (`rewindMessages`) and returns it;
 *   `db.restoreRewound(id)` brings it back.
 * - `clearSession()`: deletes every message for good; the session (id, title, lineage, usage)
 *   stays, so the same session continues empty.
 *
 * Operations on one session id through one store are serialised in this process (several
 * `ThreadlineSession` objects for the same id included); each is one store transaction, so
 * other processes see whole changes.
 *
 * @example
 * import { Agent, run } from "@openai/agents";
 * import { openSessionDB } from "threadline";
 * import { ThreadlineSession } from "threadline/openai-agents";
 *
 * const db = await openSessionDB();
 * const session = new ThreadlineSession(db, { sessionId: "support-42" });
 * const result = await run(new Agent({ name: "Helper", instructions: "Be brief." }), "Hello!", { session });
 */
export class ThreadlineSession implements AgentSession {
  readonly #db: ThreadlineSessionDB;
  readonly #id: string;
  readonly #binding: SessionBinding;
  #created: Promise<void> | null = null;

  /**
   * @param db - The store (any `SessionDB`, or an object with the `SessionHistory` methods listed in {@link ThreadlineSessionDB}).
   * @param options - Which session, and how to create it; see {@link ThreadlineSessionOptions}.
   */
  constructor(db: ThreadlineSessionDB, options: ThreadlineSessionOptions = {}) {
    if (db === null || typeof db !== "object") throw new InvalidInputError("ThreadlineSession needs a store (openSessionDB()).", { field: "db" });
    const { sessionId } = options;
    if (sessionId !== undefined && (typeof sessionId !== "string" || sessionId === "")) {
      throw new InvalidInputError("sessionId must be a non-empty string (or left out for a new session).", { field: "sessionId" });
    }
    this.#db = db;
    this.#id = sessionId ?? newSessionId(Date.now() / 1000);
    const { source = OPENAI_AGENTS_SOURCE, title, parentSessionId, userId, model, systemPrompt, titler } = options;
    this.#binding = new SessionBinding(db, { source, title, parentSessionId, userId, model, systemPrompt, titler });
  }

  /** The Threadline session id, creating the session if it does not exist yet. */
  async getSessionId(): Promise<string> {
    await this.#queued(() => this.#ensureCreated());
    return this.#id;
  }

  /**
   * The latest `limit` items in chronological order (every item without `limit`; none for
   * `limit` ≤ 0). A session not created yet has none. `limit` must be a whole number.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && (typeof limit !== "number" || Number.isNaN(limit) || (Number.isFinite(limit) && !Number.isInteger(limit)))) {
      throw new InvalidInputError(`getItems(limit): limit must be a whole number, not ${String(limit)}.`, { field: "limit" });
    }
    if (limit !== undefined && limit <= 0) return [];
    return this.#queued(async () => {
      const window = limit === undefined || limit > MAX_WINDOW ? {} : { lastMessages: limit };
      const messages = await this.#readOrNone(() => this.#db.getMessages(this.#id, window), []);
      const items = messages.flatMap(messageToItems);
      return limit === undefined || items.length <= limit ? items : items.slice(items.length - limit);
    });
  }

  /**
   * Appends items in one transaction, creating the session first if needed. An item that is not
   * a JSON object with a `role` or `type` is an `InvalidInputError` naming it (`items[i]…`),
   * and nothing is written.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidInputError("addItems needs an array of items.", { field: "items" });
    const messages = items.map((item, i) => itemToMessage(item, `items[${i}]`));
    if (messages.length === 0) return;
    await this.#queued(async () => {
      await this.#ensureCreated();
      await this.#db.appendTurn(this.#id, messages);
    });
    if (messages.some((m) => m.role === "assistant" && m.content !== null)) {
      await this.#queued(() => this.#binding.titleAfterFirstExchange(this.#id, messages));
    }
  }

  /**
   * Removes the latest item and returns it (`undefined` when there is none). The message is
   * soft-deleted as a rewind: hidden everywhere, brought back by `db.restoreRewound(id)`.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    return this.#queued(async () => {
      const [message] = await this.#readOrNone(() => this.#db.rewindMessages(this.#id, 1), []);
      return message === undefined ? undefined : messageToItems(message).at(-1);
    });
  }

  /** Deletes every message of the session for good; the session itself (id, title, lineage, usage) stays. */
  async clearSession(): Promise<void> {
    await this.#queued(() => this.#readOrNone(() => this.#db.clearMessages(this.#id), 0));
  }

  /**
   * Replaces the whole history with `items` (a compaction item and what follows it) in one
   * transaction; the SDK calls it after a Responses API compaction instead of clearing and
   * re-adding, so a failure leaves the old history whole.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidInputError("replaceHistoryWithCompaction needs an array of items.", { field: "items" });
    const messages = items.map((item, i) => itemToMessage(item, `items[${i}]`));
    await this.#queued(async () => {
      await this.#ensureCreated();
      await this.#db.replaceMessages(this.#id, messages);
    });
  }

  /** Runs `work` after the operations already queued on this session id in this process. */
  #queued<T>(work: () => Promise<T>): Promise<T> {
    let byId = queues.get(this.#db);
    if (byId === undefined) {
      byId = new Map();
      queues.set(this.#db, byId);
    }
    const map = byId;
    const previous = map.get(this.#id) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    map.set(this.#id, tail);
    void tail.then(() => {
      if (map.get(this.#id) === tail) map.delete(this.#id);
    });
    return result;
  }

  /** `read()`, or `none` when the session does not exist (yet). */
  async #readOrNone<T>(read: () => Promise<T>, none: T): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof NotFoundError && (await this.#db.getSession(this.#id)) === null) return none;
      throw error;
    }
  }

  /** Creates the session unless it exists; once per object (again after a failure). */
  #ensureCreated(): Promise<void> {
    this.#created ??= this.#create().catch((error: unknown) => {
      this.#created = null;
      throw error;
    });
    return this.#created;
  }

  async #create(): Promise<void> {
    await this.#binding.ensure(this.#id);
  }
}
