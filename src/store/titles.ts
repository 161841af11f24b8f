/**
 * Session titles: the sanitiser, the lineage-suffix rules (`t #2`, `t #3`…: compression
 * continuations only) and the collision form (`t (2)`: an unrelated session whose wanted title
 * was taken), shared by every backend.
 *
 * @module
 */
import { InvalidInputError } from "./errors.js";

/** Longest title accepted, in Unicode code points after sanitising. */
export const MAX_TITLE_CODE_POINTS = 100;

// ASCII controls except tab, newline and CR; zero-width and bidi-override characters.
const STRIPPED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/gu;
const LINEAGE_SUFFIX = /^(.*) #(\d+)$/su;
const COLLISION_SUFFIX = /^(.*) \((\d+)\)$/su;

/**
 * Cleans a title: strips ASCII control characters (tab, newline and CR become
 * spaces), zero-width and bidi-override characters, collapses whitespace and trims.
 * Returns `null` when nothing is left. Throws {@link InvalidInputError} when the
 * result is longer than {@link MAX_TITLE_CODE_POINTS} code points (titles are never
 * truncated silently).
 *
 * @example
 * sanitizeTitle("  My\u200B  project\n") // "My project"
 */
export function sanitizeTitle(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== "string") throw new InvalidInputError("A title must be a string.", { field: "title" });
  assertWellFormed(raw, "title");
  const cleaned = raw.replace(STRIPPED, "").replace(/\s+/gu, " ").trim();
  if (cleaned === "") return null;
  const length = [...cleaned].length;
  if (length > MAX_TITLE_CODE_POINTS) {
    throw new InvalidInputError(`The title is ${length} characters long; the limit is ${MAX_TITLE_CODE_POINTS}. Shorten it.`, { field: "title" });
  }
  return cleaned;
}

/** A title split into its lineage base and number: `"foo #3"` → `{ base: "foo", n: 3 }`, `"foo"` → `{ base: "foo", n: 1 }`. */
export interface LineageTitle {
  base: string;
  n: number;
}

/**
 * Splits a trailing ` #<digits>` lineage suffix off a (sanitised) title. Only
 * ` #<digits>` counts: `"Foo #bar"` has base `"Foo #bar"` and number 1.
 */
export function parseLineageTitle(title: string): LineageTitle {
  const match = LINEAGE_SUFFIX.exec(title);
  if (match && match[1] !== undefined && match[2] !== undefined && match[1] !== "") {
    const n = Number(match[2]);
    if (Number.isSafeInteger(n)) return { base: match[1], n };
  }
  return { base: title, n: 1 };
}

/**
 * The numbered form that keeps an unrelated session's title unique: `"Hello there"` with 2 is
 * `"Hello there (2)"`. It is never read as a lineage (`#N` belongs to compression
 * continuations); the base is cut at a whole character so the result stays within
 * {@link MAX_TITLE_CODE_POINTS}.
 */
export function formatCollisionTitle(base: string, n: number): string {
  if (n <= 1) return base;
  const suffix = ` (${n})`;
  const room = MAX_TITLE_CODE_POINTS - suffix.length;
  const points = [...base];
  const cut = points.length > room ? points.slice(0, room).join("").trimEnd() : base;
  return `${cut}${suffix}`;
}

/** Splits a trailing ` (<digits>)` collision suffix off a (sanitised) title: `"foo (3)"` → `{ base: "foo", n: 3 }`. */
export function parseCollisionTitle(title: string): LineageTitle {
  const match = COLLISION_SUFFIX.exec(title);
  if (match && match[1] !== undefined && match[2] !== undefined && match[1] !== "") {
    const n = Number(match[2]);
    if (Number.isSafeInteger(n) && n >= 2) return { base: match[1], n };
  }
  return { base: title, n: 1 };
}

/** Formats a lineage title: `n` of 1 is the bare base. */
export function formatLineageTitle(base: string, n: number): string {
  return n <= 1 ? base : `${base} #${n}`;
}

/** Throws {@link InvalidInputError} when a string holds a lone surrogate (it could not be stored as UTF-8). */
export function assertWellFormed(value: string, field: string): void {
  if (!value.isWellFormed()) {
    throw new InvalidInputError(
      `${field} is not valid Unicode text (it contains a lone surrogate, so it cannot be stored as UTF-8). Fix the encoding of the input.`,
      { field },
    );
  }
}
