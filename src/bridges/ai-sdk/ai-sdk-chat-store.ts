/**
 * {@link AiSdkChatStore}: AI SDK chats (UI messages or model messages) kept in a Threadline
 * session, one session per chat id.
 *
 * @module
 */
import type { LanguageModelUsage, ModelMessage, UIMessage } from "ai";
import type { Titler } from "../../agents/index.js";
import { ConflictError, InvalidInputError, type Message, type NewMessage, type SessionHistory, type UsageUpdate } from "../../store/index.js";
import { SessionBinding } from "../session-binding.js";
import { modelMessageToRows, rowsToModelMessages } from "./model-message-codec.js";
import { groupUIMessages, rowsToUIMessages, uiMessageToRows } from "./ui-message-codec.js";

/** Options of {@link AiSdkChatStore}. */
export interface AiSdkChatStoreOptions {
  /** `Session.source` of the sessions it creates (default `"ai-sdk"`). */
  source?: string;
  /** `Session.userId` of the sessions it creates (the tenant: scoped API keys and `userId` filters see only theirs). */
  userId?: string | null;
  /**
   * Titles a new chat after its first exchange, as the gateway does (default: the heuristic
   * titler from `threadline/agents`, no model call); `null`: never. A title another session
   * holds gets its collision form (`Weather in Paris (2)`).
   */
  titler?: Titler | null;
}

/** Per-call options of a write that may create the chat's session. */
export interface AiSdkChatWriteOptions {
  /** Title of the session when this call creates it (lineage-numbered when taken). */
  title?: string | null;
  /** The session a new chat continues or branches from (`Session.parentSessionId`; must exist). */
  parentSessionId?: string | null;
  /** `Session.model` when this call creates the session. */
  model?: string | null;
}

/** What {@link AiSdkChatStore.saveUIMessages} did. */
export interface SaveUIMessagesResult {
  /** `"appended"`: the new messages were added after the stored ones; `"replaced"`: the transcript was rewritten; `"unchanged"`. */
  action: "appended" | "replaced" | "unchanged";
  /** How many UI messages were written (appended, or rewritten from the first changed one). */
  written: number;
}

/** The part of a `streamText`/`generateText` finish event {@link AiSdkChatStore.onFinish} reads. */
export interface AiSdkFinishEvent {
  /** The turn's new messages (assistant and tool). */
  response: { messages: ModelMessage[]; modelId?: string };
  /** The last step's finish reason, stored on the last assistant row. */
  finishReason?: string;
  /** Usage of every step, recorded on the session. */
  totalUsage?: LanguageModelUsage;
  /** One per model call (counted as `apiCalls`). */
  steps?: readonly unknown[];
}

/** Options of {@link AiSdkChatStore.onFinish}. */
export interface AiSdkOnFinishOptions extends AiSdkChatWriteOptions {
  /**
   * Messages to store before the response in the same write (the user's message of this
   * turn), when they were not stored before the model call (default: none).
   */
  messages?: ModelMessage[];
  /** Record `totalUsage` and the number of steps on the session after the turn (default true). */
  recordUsage?: boolean;
}

/**
 * AI SDK chats in a Threadline store: each chat id is a session id, so a chat is a session like
 * any other (listed, searched, shown on the web page, titled, with lineage), created on the
 * first write with source `ai-sdk`.
 *
 * UI messages (`useChat`, `toUIMessageStreamResponse`) and model messages (`streamText`,
 * `generateText`) are stored in Threadline's natural shape: one row per user message and per
 * model step, tool calls as `toolCalls`, tool results as `tool` rows, reasoning as
 * `reasoning`. What that shape cannot hold (ids, metadata, part states, provider metadata,
 * step starts, sources, data parts, approvals) is kept in an envelope in the first row's
 * `reasoningDetails`, pointing into the natural fields rather than copying them; loading
 * gives back exactly what was saved. Rows another writer stored (the gateway, the CLI) load
 * naturally (tool calls as `dynamic-tool` parts).
 *
 * One writer per chat at a time (as the AI SDK's own persistence guide assumes): two requests
 * saving the same chat at once may both append.
 *
 * @example
 * import { openSessionDB } from "threadline";
 * import { AiSdkChatStore } from "threadline/ai-sdk";
 * import { convertToModelMessages, streamText } from "ai";
 *
 * const chats = new AiSdkChatStore(await openSessionDB("chats.db"));
 * export async function POST(req: Request) {
 *   const { id, messages } = await req.json();
 *   const result = streamText({ model, messages: await convertToModelMessages(messages) });
 *   return result.toUIMessageStreamResponse({
 *     originalMessages: messages,
 *     onFinish: chats.uiOnFinish(id),
 *   });
 * }
 */
export class AiSdkChatStore {
  readonly #db: SessionHistory;
  readonly #binding: SessionBinding;

  /** A chat store over `db` (any `SessionDB`, or an object with its `SessionHistory` role). */
  constructor(db: SessionHistory, options: AiSdkChatStoreOptions = {}) {
    this.#db = db;
    this.#binding = new SessionBinding(db, {
      source: options.source ?? "ai-sdk",
      userId: options.userId ?? null,
      titler: options.titler,
    });
  }

  /** The chat's UI messages, oldest first; `[]` for a chat never written. */
  async loadUIMessages<M extends UIMessage = UIMessage>(chatId: string): Promise<M[]> {
    return rowsToUIMessages(await this.#rows(chatId)) as M[];
  }

  /** The chat's model messages, oldest first (for `streamText({ messages })`); `[]` for a chat never written. */
  async loadModelMessages(chatId: string): Promise<ModelMessage[]> {
    return rowsToModelMessages(await this.#rows(chatId));
  }

  /** Appends UI messages in one write (all or none); creates the session on first write. */
  async appendUIMessages(chatId: string, messages: UIMessage[], options: AiSdkChatWriteOptions = {}): Promise<void> {
    const rows = encode(messages, "messages", uiMessageToRows);
    await this.#append(chatId, rows, options);
  }

  /** Appends model messages in one write (all or none); creates the session on first write. */
  async appendModelMessages(chatId: string, messages: ModelMessage[], options: AiSdkChatWriteOptions = {}): Promise<void> {
    const rows = encode(messages, "messages", modelMessageToRows);
    await this.#append(chatId, rows, options);
  }

  /**
   * Makes the stored chat equal to `messages` (the whole chat, as `useChat` and
   * `toUIMessageStreamResponse`'s `onFinish` hand it over), in one write: messages after the
   * stored ones are appended; when a stored message changed (a continued assistant message
   * after a client-side tool result or an approval, a regenerated reply, an edited message)
   * the transcript is rewritten from scratch in one transaction, keeping the unchanged rows as
   * they were (a rewrite costs the whole transcript; appends cost only the new rows).
   *
   * Throws {@link ConflictError} when `messages` does not start with the chat's first stored
   * message (a client that sends only its last message: use {@link appendUIMessages}), so a
   * partial list never wipes a history.
   */
  async saveUIMessages(chatId: string, messages: UIMessage[], options: AiSdkChatWriteOptions = {}): Promise<SaveUIMessagesResult> {
    if (!Array.isArray(messages)) throw new InvalidInputError("messages must be an array of UI messages.", { field: "messages" });
    const rows = await this.#rows(chatId);
    const groups = groupUIMessages(rows);
    const stored = groups.map((g) => g.message);
    if (stored.length > 0 && messages[0]?.id !== stored[0]!.id) {
      throw new ConflictError(
        `Chat ${chatId} starts with message ${stored[0]!.id}, but the messages to save start with ${messages[0]?.id ?? "nothing"}. ` +
          "saveUIMessages takes the whole chat; to add messages to it, use appendUIMessages.",
        { sessionId: chatId },
      );
    }
    let same = 0;
    while (same < stored.length && same < messages.length && sameMessage(stored[same]!, messages[same]!)) same += 1;
    if (same === stored.length) {
      if (same === messages.length) return { action: "unchanged", written: 0 };
      await this.#append(chatId, encode(messages.slice(same), "messages", uiMessageToRows, same), options);
      return { action: "appended", written: messages.length - same };
    }
    // Keep the rows of the unchanged messages as they are; rewrite from the first changed one.
    const keptRows = rows.slice(
      0,
      groups.slice(0, same).reduce((n, g) => n + g.rows, 0),
    );
    const fresh = encode(messages.slice(same), "messages", uiMessageToRows, same);
    await this.#db.replaceMessages(chatId, [...keptRows.map(asNewMessage), ...fresh]);
    await this.#binding.titleAfterFirstExchange(chatId, fresh);
    return { action: "replaced", written: messages.length - same };
  }

  /**
   * An `onFinish` for `streamText` or `generateText`: stores the turn's response messages
   * (and `options.messages` before them, e.g. the user's message) in one `appendTurn`, the
   * finish reason on the last assistant row, then adds the usage to the session.
   *
   * @example
   * await chats.appendModelMessages(id, [userMessage]); // stored before the model runs
   * const result = streamText({
   *   model,
   *   messages: await chats.loadModelMessages(id),
   *   onFinish: chats.onFinish(id),
   * });
   */
  onFinish(chatId: string, options: AiSdkOnFinishOptions = {}): (event: AiSdkFinishEvent) => Promise<void> {
    return async (event) => {
      const before = options.messages ?? [];
      const rows = encode([...before, ...event.response.messages], "messages", modelMessageToRows);
      const lastAssistant = rows.findLastIndex((r) => r.role === "assistant");
      if (lastAssistant >= 0 && event.finishReason !== undefined) rows[lastAssistant]!.finishReason = event.finishReason;
      await this.#append(chatId, rows, { model: event.response.modelId ?? null, ...options });
      if (options.recordUsage !== false && event.totalUsage !== undefined) {
        await this.#db.recordUsage(chatId, usageOf(event.totalUsage, event.steps?.length ?? 1));
      }
    };
  }

  /**
   * An `onFinish` for `toUIMessageStreamResponse` / `createUIMessageStream`: saves the whole
   * chat it hands over with {@link saveUIMessages} (one write; an aborted stream's partial
   * reply is saved too).
   */
  uiOnFinish(chatId: string, options: AiSdkChatWriteOptions = {}): (event: { messages: UIMessage[] }) => Promise<void> {
    return async (event) => {
      await this.saveUIMessages(chatId, event.messages, options);
    };
  }

  async #rows(chatId: string): Promise<Message[]> {
    if (typeof chatId !== "string" || chatId === "") throw new InvalidInputError("chatId must be a non-empty string.", { field: "chatId" });
    if ((await this.#db.getSession(chatId)) === null) return [];
    return this.#db.getMessages(chatId);
  }

  async #append(chatId: string, rows: NewMessage[], options: AiSdkChatWriteOptions): Promise<void> {
    if (typeof chatId !== "string" || chatId === "") throw new InvalidInputError("chatId must be a non-empty string.", { field: "chatId" });
    if (rows.length === 0) return;
    await this.#binding.ensure(chatId, options);
    await this.#db.appendTurn(chatId, rows);
    await this.#binding.titleAfterFirstExchange(chatId, rows);
  }
}

/** Encodes messages to rows; a message that cannot be encoded is an {@link InvalidInputError} naming it. */
function encode<M>(messages: M[], field: string, toRows: (m: M, timestamp: number) => NewMessage[], offset = 0): NewMessage[] {
  if (!Array.isArray(messages)) throw new InvalidInputError(`${field} must be an array.`, { field });
  const now = Date.now() / 1000;
  return messages.flatMap((m, i) => {
    if (m === null || typeof m !== "object")
      throw new InvalidInputError(`${field}[${offset + i}] must be a message object.`, { field: `${field}[${offset + i}]` });
    try {
      return toRows(m, now);
    } catch (cause) {
      throw new InvalidInputError(`${field}[${offset + i}] cannot be stored: ${(cause as Error).message}.`, { field: `${field}[${offset + i}]`, cause });
    }
  });
}

/** Two UI messages are the same when their JSON is (what storing them keeps). */
function sameMessage(a: UIMessage, b: UIMessage): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** A stored row as a message to write again, unchanged. */
function asNewMessage(m: Message): NewMessage {
  return {
    role: m.role,
    content: m.content,
    toolCalls: m.toolCalls,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    tokenCount: m.tokenCount,
    finishReason: m.finishReason,
    reasoning: m.reasoning,
    reasoningDetails: m.reasoningDetails,
    platformMessageId: m.platformMessageId,
    timestamp: m.timestamp,
  };
}

function usageOf(usage: LanguageModelUsage, calls: number): UsageUpdate {
  const update: UsageUpdate = { apiCalls: calls };
  if (usage.inputTokens !== undefined) update.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) update.outputTokens = usage.outputTokens;
  const cacheRead = usage.inputTokenDetails?.cacheReadTokens;
  const cacheWrite = usage.inputTokenDetails?.cacheWriteTokens;
  const reasoning = usage.outputTokenDetails?.reasoningTokens;
  if (cacheRead !== undefined) update.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) update.cacheWriteTokens = cacheWrite;
  if (reasoning !== undefined) update.reasoningTokens = reasoning;
  return update;
}
