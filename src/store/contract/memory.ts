/**
 * The {@link MemoryStore} role (per-person memory) and its records and limits. Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */
import type { Page } from "./page.js";

/**
 * Which of a person's two memories (hermes-agent's files): `memory` is the agent's own notes
 * (hermes' `MEMORY.md`), `user` is what it knows about the person (hermes' `USER.md`).
 */
export type MemoryKind = "memory" | "user";

/**
 * Whose memory: a person. The gateway owner (`gateway.owner`) is
 * `{ platform: "owner", userId: "owner" }`; anyone else is their platform and canonical
 * (alias-resolved) user id. Both are non-empty ids of at most 256 characters without
 * control characters.
 */
export interface MemoryOwner {
  platform: string;
  userId: string;
}

/** A person's memory of one kind, as stored. */
export interface MemoryRecord {
  owner: MemoryOwner;
  kind: MemoryKind;
  /** The entries in order (hermes' `§`-separated entries); each non-empty. */
  entries: string[];
  /** Characters (Unicode code points) of the entries joined by `"\n§\n"`: what the limit counts. */
  chars: number;
  /** When it was last written, in epoch milliseconds (like pairing times). */
  updatedAt: number;
  /** Starts at 1 and grows by one with every write (optimistic concurrency: pass it as `expectedVersion`). */
  version: number;
}

/** What {@link MemoryStore.writeMemory} writes. */
export interface MemoryWrite {
  owner: MemoryOwner;
  kind: MemoryKind;
  /** The new entries (replacing all of them; `[]` keeps an empty record). */
  entries: string[];
  /** The version the caller read; `null` means the record must not exist yet. */
  expectedVersion: number | null;
  /** The write time in epoch milliseconds (default: now). */
  now?: number;
}

/** Options of {@link MemoryStore.listMemories}. */
export interface ListMemoriesOptions {
  /** Only this user id's records (a tenant sees only its own). */
  userId?: string;
  /** Only this platform's records (`"owner"` for the gateway owner). */
  platform?: string;
  /** Page size, 1 to 200 (default 50). */
  limit?: number;
  /** The `nextCursor` of the previous page, with the same filters. */
  cursor?: string | null;
}

/**
 * Per-person memory (hermes-agent's `MEMORY.md` and `USER.md`, kept in the database): two
 * small bounded lists of entries per person, written by the `memory` tool and shown in that
 * person's context prompt only. Limits are in characters over the entries joined by
 * `"\n§\n"`: {@link MEMORY_CHAR_LIMIT} for `memory`, {@link USER_CHAR_LIMIT} for `user`.
 */
export interface MemoryStore {
  /** The person's memory of `kind`, or `null` when none was written. */
  getMemory(owner: MemoryOwner, kind: MemoryKind): Promise<MemoryRecord | null>;
  /**
   * Replaces the entries when the stored version is `expectedVersion` (`null`: when there is
   * no record yet) and returns the new record; returns `null`, writing nothing, on a version
   * conflict. Throws {@link InvalidInputError} naming the limit when the entries are too long,
   * and for an empty entry or an entry holding a line that is only `§` (the separator).
   */
  writeMemory(write: MemoryWrite): Promise<MemoryRecord | null>;
  /** Deletes one kind or (without `kind`) both; returns how many records were removed. */
  clearMemory(owner: MemoryOwner, kind?: MemoryKind): Promise<number>;
  /**
   * Records, newest `updatedAt` first, with a keyset cursor; `userId` and `platform` filter
   * (a tenant key sees only its own userId's records).
   */
  listMemories(options?: ListMemoriesOptions): Promise<Page<MemoryRecord>>;
}

/** hermes' `MEMORY.md` limit: characters of the `memory` entries joined by `"\n§\n"`. */
export const MEMORY_CHAR_LIMIT = 2200;
/** hermes' `USER.md` limit: characters of the `user` entries joined by `"\n§\n"`. */
export const USER_CHAR_LIMIT = 1375;
