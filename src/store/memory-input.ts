/**
 * Per-person memory, the parts both backends share: validation of owners, kinds and entries
 * (hermes-agent's limits, counted the way hermes counts them), the `memories` row and its
 * mapping to a {@link MemoryRecord}, and the listing cursor.
 *
 * @module
 */
import {
  MEMORY_CHAR_LIMIT,
  USER_CHAR_LIMIT,
  type ListMemoriesOptions,
  type MemoryKind,
  type MemoryOwner,
  type MemoryRecord,
  type MemoryWrite,
} from "./contract.js";
import { decodeCursor, type CursorPosition } from "./cursor.js";
import { InvalidInputError } from "./errors.js";
import { checkId, checkIdFilter, checkLimit } from "./input-validation.js";
import { checkMillis } from "./pairing-input.js";
import { assertWellFormed } from "./titles.js";

/** The kinds of memory. */
export const MEMORY_KINDS: readonly MemoryKind[] = ["memory", "user"];

/** What joins entries when they are counted and shown (hermes' `ENTRY_DELIMITER`). */
export const MEMORY_ENTRY_SEPARATOR = "\n§\n";

/** The owner the gateway's owner (`gateway.owner`) writes as. */
export const OWNER_MEMORY_OWNER: MemoryOwner = Object.freeze({ platform: "owner", userId: "owner" });

/** The listing's cursor ordering. */
const MEMORY_LIST_ORDER = "memory:updated";
const DEFAULT_MEMORY_PAGE = 50;
const MAX_MEMORY_PAGE = 200;

/** Control characters an entry may not hold (tab, newline and carriage return are text). */
const ENTRY_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/u;
/** A line that is only the separator mark (it would split the entry when shown or edited). */
const SEPARATOR_LINE = /(^|\n)[ \t]*§[ \t]*(\r?\n|$)/u;

/** The character limit of a kind: 2,200 for `memory`, 1,375 for `user`. */
export function memoryCharLimit(kind: MemoryKind): number {
  return kind === "memory" ? MEMORY_CHAR_LIMIT : USER_CHAR_LIMIT;
}

/** Characters (Unicode code points, as Python's `len` counts them) of the entries joined by the separator. */
export function memoryChars(entries: readonly string[]): number {
  let chars = 0;
  for (const entry of entries) for (const _ of entry) chars++;
  return chars + Math.max(0, entries.length - 1) * MEMORY_ENTRY_SEPARATOR.length;
}

/** Checks a kind. */
export function checkMemoryKind(value: unknown, field = "kind"): MemoryKind {
  if (value !== "memory" && value !== "user") {
    throw new InvalidInputError(`${field} must be "memory" (the agent's notes) or "user" (about the person).`, { field });
  }
  return value;
}

/** Checks an owner: an object with a non-empty `platform` and `userId` (ids of at most 256 characters). */
export function checkMemoryOwner(value: unknown, field = "owner"): MemoryOwner {
  if (typeof value !== "object" || value === null) {
    throw new InvalidInputError(`${field} must be an object { platform, userId }.`, { field });
  }
  const owner = value as Partial<MemoryOwner>;
  return { platform: checkId(owner.platform, `${field}.platform`), userId: checkId(owner.userId, `${field}.userId`) };
}

/** Checks one entry: a well-formed, non-blank string without control characters or a separator line. */
export function checkMemoryEntry(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidInputError(`${field} must be a string.`, { field });
  if (value.trim().length === 0) throw new InvalidInputError(`${field} is empty; an entry needs some text.`, { field });
  assertWellFormed(value, field);
  if (ENTRY_CONTROL.test(value)) throw new InvalidInputError(`${field} must not contain control characters.`, { field });
  if (SEPARATOR_LINE.test(value)) {
    throw new InvalidInputError(`${field} holds a line that is only "§", the separator between entries; split it into two entries.`, { field });
  }
  return value;
}

/**
 * Checks entries against the kind's limit; throws {@link InvalidInputError} naming the
 * limit and the count when they are too long.
 */
export function checkMemoryEntries(value: unknown, kind: MemoryKind, field = "entries"): string[] {
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of strings.`, { field });
  const entries = value.map((entry, i) => checkMemoryEntry(entry, `${field}[${i}]`));
  const chars = memoryChars(entries);
  const limit = memoryCharLimit(kind);
  if (chars > limit) {
    throw new InvalidInputError(
      `The ${kind} memory would be ${chars.toLocaleString("en-US")} characters; the limit is ${limit.toLocaleString("en-US")} (entries joined by "\\n§\\n"). Shorten or remove entries.`,
      { field },
    );
  }
  return entries;
}

/** A checked {@link MemoryWrite}. */
export interface CheckedMemoryWrite {
  owner: MemoryOwner;
  kind: MemoryKind;
  entries: string[];
  chars: number;
  expectedVersion: number | null;
  now: number;
}

/** Checks `writeMemory`'s argument. */
export function checkMemoryWrite(write: unknown): CheckedMemoryWrite {
  if (typeof write !== "object" || write === null) throw new InvalidInputError("The write must be an object.", { field: "write" });
  const w = write as Partial<MemoryWrite>;
  const owner = checkMemoryOwner(w.owner);
  const kind = checkMemoryKind(w.kind);
  const entries = checkMemoryEntries(w.entries, kind);
  const expected = w.expectedVersion;
  if (expected !== null && (typeof expected !== "number" || !Number.isSafeInteger(expected) || expected < 1)) {
    throw new InvalidInputError("expectedVersion must be the version read (a whole number from 1) or null for a new record.", {
      field: "expectedVersion",
    });
  }
  return { owner, kind, entries, chars: memoryChars(entries), expectedVersion: expected, now: checkMillis(w.now, "now") };
}

/** A checked {@link ListMemoriesOptions}. */
export interface CheckedListMemories {
  userId: string | null;
  platform: string | null;
  limit: number;
  after: CursorPosition | null;
}

/** Checks `listMemories`' options. */
export function checkListMemories(options: ListMemoriesOptions | undefined): CheckedListMemories {
  const opts = options ?? {};
  if (typeof opts !== "object") throw new InvalidInputError("options must be an object.", { field: "options" });
  return {
    userId: checkIdFilter(opts.userId, "userId"),
    platform: checkIdFilter(opts.platform, "platform"),
    limit: checkLimit(opts.limit, DEFAULT_MEMORY_PAGE, MAX_MEMORY_PAGE),
    after: opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, MEMORY_LIST_ORDER),
  };
}

/** A `memories` row (same column names on both backends; PostgreSQL returns `bigint` as text). */
export interface MemoryRow {
  platform: string;
  user_id: string;
  kind: string;
  entries: string;
  chars: number | string;
  updated_at: number | string;
  version: number | string;
}

/** The columns {@link toMemoryRecord} reads. */
export const MEMORY_COLUMNS = "platform, user_id, kind, entries, chars, updated_at, version";

/** A row as a {@link MemoryRecord}. */
export function toMemoryRecord(row: MemoryRow): MemoryRecord {
  return {
    owner: { platform: row.platform, userId: row.user_id },
    kind: row.kind as MemoryKind,
    entries: JSON.parse(row.entries) as string[],
    chars: Number(row.chars),
    updatedAt: Number(row.updated_at),
    version: Number(row.version),
  };
}

/** The cursor id of a record (its key, as JSON), for the listing's keyset. */
export function memoryCursorId(row: Pick<MemoryRow, "platform" | "user_id" | "kind">): string {
  return JSON.stringify([row.platform, row.user_id, row.kind]);
}

/** Undoes {@link memoryCursorId}; throws {@link InvalidInputError} for a cursor not made by it. */
export function parseMemoryCursorId(id: string): [string, string, string] {
  try {
    const parsed: unknown = JSON.parse(id);
    if (Array.isArray(parsed) && parsed.length === 3 && parsed.every((p) => typeof p === "string")) return parsed as [string, string, string];
  } catch {
    // fall through
  }
  throw new InvalidInputError("The cursor is not valid (malformed). Pass the nextCursor of the previous page unchanged.", { field: "cursor" });
}

export { MEMORY_LIST_ORDER };
