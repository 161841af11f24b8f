/**
 * The part of `@mastra/libsql` (and the `@mastra/core` types it takes) that the Mastra
 * comparison calls, typed by hand: the package is never a dependency of ours, it is installed
 * into a temp dir at benchmark time and loaded by absolute path (see `install.ts`).
 *
 * Checked against `@mastra/libsql` 1.23.1 / `@mastra/core` 1.71.0 (`dist/index.d.ts` of the
 * package, `MemoryLibSQL` in `storage/domains/memory`).
 *
 * @module
 */

/** `StorageThreadType` of `@mastra/core/memory`. */
export interface MastraThread {
  id: string;
  resourceId: string;
  title?: string;
  createdAt: Date;
  updatedAt: Date;
  metadata?: Record<string, unknown>;
}

/** The parts of a v2 message the benchmark writes (`MastraMessagePart`, a subset). */
export type MastraMessagePart =
  | { type: "text"; text: string }
  | {
      type: "tool-invocation";
      toolInvocation:
        | { state: "call"; toolCallId: string; toolName: string; args: unknown }
        | { state: "result"; toolCallId: string; toolName: string; args: unknown; result: unknown };
    };

/** `MastraDBMessage` of `@mastra/core` (format 2 content). */
export interface MastraMessage {
  id: string;
  role: "user" | "assistant" | "system";
  createdAt: Date;
  threadId: string;
  resourceId: string;
  type?: string;
  content: { format: 2; parts: MastraMessagePart[]; content?: string; metadata?: Record<string, unknown> };
}

/** `MemoryLibSQL`: the memory domain of the store (`await store.getStore("memory")`). */
export interface MastraMemoryStore {
  saveThread(args: { thread: MastraThread }): Promise<MastraThread>;
  saveMessages(args: { messages: MastraMessage[] }): Promise<{ messages: MastraMessage[] }>;
  listMessages(args: {
    threadId: string | string[];
    perPage?: number | false;
    page?: number;
    orderBy?: { field?: "createdAt"; direction?: "ASC" | "DESC" };
  }): Promise<{ messages: MastraMessage[]; total: number; hasMore: boolean }>;
  listThreads(args: {
    perPage?: number | false;
    page?: number;
    orderBy?: { field?: "createdAt" | "updatedAt"; direction?: "ASC" | "DESC" };
    filter?: { resourceId?: string };
  }): Promise<{ threads: MastraThread[]; total: number; hasMore: boolean }>;
}

/** `LibSQLStore`: the composite store Mastra apps configure (`new LibSQLStore({ id, url })`). */
export interface MastraLibSQLStore {
  init(): Promise<void>;
  getStore(domain: "memory"): Promise<MastraMemoryStore | undefined>;
  close(): Promise<void>;
}

/** The module `@mastra/libsql` (only its `LibSQLStore` export). */
export interface MastraLibSQLModule {
  LibSQLStore: new (config: { id: string; url: string }) => MastraLibSQLStore;
}
