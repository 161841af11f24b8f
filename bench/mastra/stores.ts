/**
 * The two stores under test behind one small interface: Threadline's SQLite store (through its
 * public API) and Mastra's `LibSQLStore` (its memory domain), each on a local file.
 *
 * @module
 */
import { openSessionDB } from "../../src/index.js";
import type { NewMessage, SessionDB } from "../../src/index.js";
import type { MastraLibSQLModule, MastraMemoryStore, MastraLibSQLStore, MastraMessage, MastraMessagePart } from "./mastra-api.js";
import type { WorkMessage, WorkThread } from "./workload.js";

/** Page size of the listing phase, on both sides. */
export const LIST_PAGE = 20;

/** What the benchmark does to a store. */
export interface StoreUnderTest {
  /** Creates a thread (one durable call). */
  createThread(thread: WorkThread): Promise<void>;
  /** Saves one message (one durable call); `index` is its position in the thread. */
  saveMessage(thread: WorkThread, message: WorkMessage, index: number): Promise<void>;
  /** Reads a thread's whole transcript; returns how many messages came back. */
  readTranscript(threadId: string): Promise<number>;
  /** Lists a user's newest {@link LIST_PAGE} threads; returns how many came back. */
  listByUser(userId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Threadline on a SQLite file with `synchronous: "NORMAL"` (what Mastra sets): createSession,
 * appendMessage, getMessages, listSessions({ userId, limit, includeChildren: true }).
 */
export async function openThreadline(path: string): Promise<StoreUnderTest> {
  const db: SessionDB = await openSessionDB(path, { synchronous: "NORMAL" });
  return {
    async createThread(thread) {
      const input = {
        id: thread.id,
        source: thread.source,
        userId: thread.userId,
        model: thread.model,
        parentSessionId: thread.parentId,
        startedAt: thread.startedAt,
        title: thread.title,
      };
      try {
        await db.createSession(input);
      } catch (error) {
        // The shared dataset has a few duplicate titles; run.ts's ingest creates those untitled too.
        if (thread.title === null || (error as { code?: unknown }).code !== "TL_ERR_CONFLICT") throw error;
        await db.createSession({ ...input, title: null });
      }
    },
    async saveMessage(thread, message) {
      await db.appendMessage(thread.id, toNewMessage(message));
    },
    async readTranscript(threadId) {
      return (await db.getMessages(threadId)).length;
    },
    async listByUser(userId) {
      return (await db.listSessions({ userId, limit: LIST_PAGE, includeChildren: true })).items.length;
    },
    close: () => db.close(),
  };
}

function toNewMessage(message: WorkMessage): NewMessage {
  return {
    role: message.role,
    content: message.content,
    toolCalls: message.toolCalls,
    toolName: message.toolName,
    toolCallId: message.toolCallId,
    timestamp: message.timestamp,
    tokenCount: message.tokenCount,
    finishReason: message.finishReason,
  };
}

/**
 * Mastra's `LibSQLStore` on `file:<path>` (it sets WAL and `synchronous=NORMAL` itself), its
 * memory domain: saveThread, saveMessages({ messages: [one] }), listMessages({ threadId,
 * perPage: false }), listThreads({ filter: { resourceId }, perPage, orderBy updatedAt DESC }).
 */
export async function openMastra(mastra: MastraLibSQLModule, path: string): Promise<StoreUnderTest> {
  const store: MastraLibSQLStore = new mastra.LibSQLStore({ id: "threadline-bench", url: `file:${path}` });
  await store.init();
  const found = await store.getStore("memory");
  if (found === undefined) throw new Error("LibSQLStore has no memory domain (getStore('memory') returned nothing).");
  const memory: MastraMemoryStore = found;
  return {
    async createThread(thread) {
      const at = new Date(thread.startedAt * 1000);
      const metadata: Record<string, unknown> = { source: thread.source };
      if (thread.model !== null) metadata["model"] = thread.model;
      if (thread.parentId !== null) metadata["parentThreadId"] = thread.parentId;
      await memory.saveThread({
        // Mastra's threads table has a NOT NULL title: an untitled session gets "".
        thread: { id: thread.id, resourceId: thread.userId, title: thread.title ?? "", createdAt: at, updatedAt: at, metadata },
      });
    },
    async saveMessage(thread, message, index) {
      await memory.saveMessages({ messages: [toMastraMessage(thread, message, index)] });
    },
    async readTranscript(threadId) {
      return (await memory.listMessages({ threadId, perPage: false })).messages.length;
    },
    async listByUser(userId) {
      const page = await memory.listThreads({
        filter: { resourceId: userId },
        perPage: LIST_PAGE,
        page: 0,
        orderBy: { field: "updatedAt", direction: "DESC" },
      });
      return page.threads.length;
    },
    close: () => store.close(),
  };
}

/**
 * A message in Mastra's v2 format: text as a text part; an assistant's tool calls as
 * `tool-invocation` parts in state `call`; a tool result (Mastra has no tool role) as an
 * assistant message holding a `tool-invocation` part in state `result`. Token count and
 * finish reason go to `content.metadata`.
 */
export function toMastraMessage(thread: WorkThread, message: WorkMessage, index: number): MastraMessage {
  const parts: MastraMessagePart[] = [];
  if (message.role === "tool") {
    parts.push({
      type: "tool-invocation",
      toolInvocation: { state: "result", toolCallId: message.toolCallId ?? "", toolName: message.toolName ?? "", args: {}, result: message.content },
    });
  } else {
    if (message.content !== "") parts.push({ type: "text", text: message.content });
    for (const call of message.toolCalls ?? []) {
      parts.push({
        type: "tool-invocation",
        toolInvocation: { state: "call", toolCallId: call.id, toolName: call.function.name, args: parseArgs(call.function.arguments) },
      });
    }
  }
  const metadata: Record<string, unknown> = {};
  if (message.tokenCount !== null) metadata["tokenCount"] = message.tokenCount;
  if (message.finishReason !== null) metadata["finishReason"] = message.finishReason;
  return {
    id: `${thread.id}:${index}`,
    role: message.role === "user" ? "user" : "assistant",
    createdAt: new Date(message.timestamp * 1000),
    threadId: thread.id,
    resourceId: thread.userId,
    type: "v2",
    content: { format: 2, parts, ...(Object.keys(metadata).length === 0 ? {} : { metadata }) },
  };
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
