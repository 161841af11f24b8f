/**
 * {@link ThreadlineChatMessageHistory}: a LangChain chat message history kept in a Threadline
 * session.
 *
 * @module
 */
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { mapStoredMessagesToChatMessages, type BaseMessage } from "@langchain/core/messages";
import type { Titler } from "../../agents/index.js";
import { InvalidInputError, type SessionHistory } from "../../store/index.js";
import { SessionBinding } from "../session-binding.js";
import { langchainMessageToRow, rowToStoredMessage, storedFormOf } from "./langchain-message-codec.js";

/** Options of {@link ThreadlineChatMessageHistory}. */
export interface ThreadlineChatMessageHistoryOptions {
  /** The store (any `SessionDB`, or an object with its `SessionHistory` role). */
  db: SessionHistory;
  /** The session id (LangChain's `sessionId`); the session is created on the first write. */
  sessionId: string;
  /** `Session.source` of a session it creates (default `"langchain"`). */
  source?: string;
  /** `Session.userId` of a session it creates (the tenant). */
  userId?: string | null;
  /** Title of a session it creates; a title another session holds gets its collision form (`t (2)`). */
  title?: string | null;
  /** The session a new one continues or branches from (`Session.parentSessionId`; must exist). */
  parentSessionId?: string | null;
  /** `Session.model` of a session it creates. */
  model?: string | null;
  /**
   * Titles an untitled session after its first exchange, as the gateway does (default: the
   * heuristic titler, no model call); `null`: never.
   */
  titler?: Titler | null;
}

/**
 * A LangChain `BaseListChatMessageHistory` over a Threadline session: human, AI, system and
 * tool messages are stored in Threadline's natural shape (AI `tool_calls` as `toolCalls`,
 * `tool_call_id` as `toolCallId`), so the session is listed, searched and shown like any
 * other (source `langchain`); everything else of a message (ids, `additional_kwargs`,
 * `response_metadata`, `usage_metadata`, artifacts…) is kept beside it, and
 * {@link getMessages} gives back what was added.
 *
 * `addMessages` writes all its messages in one transaction (all or none); `clear` deletes the
 * session's messages (the session, its title and lineage stay).
 *
 * @example
 * import { openSessionDB } from "threadline";
 * import { ThreadlineChatMessageHistory } from "threadline/langchain";
 * import { RunnableWithMessageHistory } from "@langchain/core/runnables";
 *
 * const db = await openSessionDB("chats.db");
 * const chain = new RunnableWithMessageHistory({
 *   runnable: prompt.pipe(model),
 *   getMessageHistory: (sessionId) => new ThreadlineChatMessageHistory({ db, sessionId }),
 *   inputMessagesKey: "question",
 *   historyMessagesKey: "history",
 * });
 * await chain.invoke({ question: "Hi" }, { configurable: { sessionId: "user-42" } });
 */
export class ThreadlineChatMessageHistory extends BaseListChatMessageHistory {
  /** LangChain's serialisation namespace of this class. */
  lc_namespace = ["threadline", "langchain", "chat_history"];
  /** The session id. */
  readonly sessionId: string;
  readonly #db: SessionHistory;
  readonly #binding: SessionBinding;
  readonly #create: { title: string | null; parentSessionId: string | null; model: string | null };

  constructor(options: ThreadlineChatMessageHistoryOptions) {
    super();
    if (options === null || typeof options !== "object" || options.db === undefined) {
      throw new InvalidInputError("ThreadlineChatMessageHistory needs { db, sessionId }.", { field: "db" });
    }
    if (typeof options.sessionId !== "string" || options.sessionId === "") {
      throw new InvalidInputError("sessionId must be a non-empty string.", { field: "sessionId" });
    }
    this.sessionId = options.sessionId;
    this.#db = options.db;
    this.#binding = new SessionBinding(options.db, {
      source: options.source ?? "langchain",
      userId: options.userId ?? null,
      titler: options.titler,
    });
    this.#create = { title: options.title ?? null, parentSessionId: options.parentSessionId ?? null, model: options.model ?? null };
  }

  /** The session's visible messages, oldest first; `[]` for a session never written. */
  async getMessages(): Promise<BaseMessage[]> {
    if ((await this.#db.getSession(this.sessionId)) === null) return [];
    const rows = await this.#db.getMessages(this.sessionId);
    return mapStoredMessagesToChatMessages(rows.map(rowToStoredMessage));
  }

  /** Adds one message. */
  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** Adds messages in one write (one `appendTurn`: all or none); creates the session on first write. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (!Array.isArray(messages)) throw new InvalidInputError("messages must be an array of LangChain messages.", { field: "messages" });
    if (messages.length === 0) return;
    const now = Date.now() / 1000;
    const rows = messages.map((m, i) => {
      try {
        return langchainMessageToRow(storedFormOf(m, `messages[${i}]`), now);
      } catch (cause) {
        throw new InvalidInputError(`messages[${i}] cannot be stored: ${(cause as Error).message}.`, { field: `messages[${i}]`, cause });
      }
    });
    await this.#binding.ensure(this.sessionId, this.#create);
    await this.#db.appendTurn(this.sessionId, rows);
    await this.#binding.titleAfterFirstExchange(this.sessionId, rows);
  }

  /** Deletes the session's messages (the session itself, its title and lineage stay). */
  override async clear(): Promise<void> {
    if ((await this.#db.getSession(this.sessionId)) === null) return;
    await this.#db.clearMessages(this.sessionId);
  }
}
