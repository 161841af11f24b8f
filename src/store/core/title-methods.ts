/**
 * Titles of the store core ({@link StoreCore}): setting, reading and resolving titles, similar
 * titles, free and next-in-lineage titles, as functions of the dialect.
 *
 * @module
 */
import { ConflictError, InvalidInputError } from "../errors.js";
import { checkId } from "../input-validation.js";
import { formatCollisionTitle, formatLineageTitle, parseCollisionTitle, parseLineageTitle, sanitizeTitle } from "../titles.js";
import { assertOpen } from "./assert-open.js";
import { requireRow } from "./session-steps.js";
import { all, column, placeholders, run, value } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { claimTitle } from "./title-steps.js";

/** How many collision forms (`t (2)` … `t (N)`) {@link StoreCore.similarTitles} looks for. */
const SIMILAR_COLLISION_FORMS = 20;

/** {@link StoreCore.freeTitle} tries collision forms in batches of this many, up to `(FREE_TITLE_LIMIT - 1)`. */
const FREE_TITLE_BATCH = 50;

const FREE_TITLE_LIMIT = 10_001;

/** A title as looked up: sanitised, or `null` when no stored title can equal it (empty, too long, not text). */
function lookupTitle(title: string): string | null {
  try {
    return sanitizeTitle(title);
  } catch {
    return null; // longer than any stored title can be
  }
}

export async function setTitle(d: StoreDialect<unknown>, id: string, title: string | null): Promise<string | null> {
  checkId(id, "id");
  const clean = sanitizeTitle(title);
  return d.write(`setting the title of ${id}`, function* () {
    const row = yield* requireRow(d, id, true);
    if (clean !== null) yield* claimTitle(clean, id, row.parent_session_id);
    const lineage = clean === null ? null : parseLineageTitle(clean);
    yield* run("UPDATE sessions SET title = ?, title_base = ?, title_n = ? WHERE id = ?", [clean, lineage?.base ?? null, lineage?.n ?? null, id]);
    return clean;
  });
}

export async function getTitle(d: StoreDialect<unknown>, id: string): Promise<string | null> {
  checkId(id, "id");
  return d.read("reading a title", function* () {
    return (yield* requireRow(d, id)).title;
  });
}

export async function resolveByTitle(d: StoreDialect<unknown>, title: string): Promise<string | null> {
  assertOpen(d);
  const wanted = lookupTitle(title);
  if (wanted === null) return null;
  return d.read("resolving a title", function* () {
    return (yield* value<string>("SELECT id FROM sessions WHERE title = ?", [wanted])) ?? null;
  });
}

export async function similarTitles(d: StoreDialect<unknown>, title: string, limit = 20): Promise<Array<{ id: string; title: string }>> {
  assertOpen(d);
  const wanted = lookupTitle(title);
  if (wanted === null) return [];
  const cap = Math.min(Math.max(Math.trunc(Number(limit)) || 1, 1), 100);
  const lineageBase = parseLineageTitle(wanted).base;
  const collisionBase = parseCollisionTitle(lineageBase).base;
  const forms = new Set<string>([lineageBase, collisionBase]);
  for (let n = 2; n <= SIMILAR_COLLISION_FORMS; n++) forms.add(formatCollisionTitle(collisionBase, n));
  forms.delete(wanted);
  const list = [...forms];
  return d.read("finding similar titles", function* () {
    const rows = yield* all<{ id: string; title: string }>(
      `SELECT id, title FROM sessions WHERE (title_base IN (?, ?) OR title IN (${placeholders(list.length)})) AND title <> ?
       ORDER BY started_at DESC, id DESC LIMIT ?`,
      [lineageBase, collisionBase, ...list, wanted, cap],
    );
    return rows;
  });
}

export async function freeTitle(d: StoreDialect<unknown>, title: string): Promise<string> {
  const clean = sanitizeTitle(title);
  if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
  const { base } = parseCollisionTitle(clean);
  return d.read("finding a free title", function* () {
    if ((yield* value<string>("SELECT id FROM sessions WHERE title = ?", [clean])) === undefined) return clean;
    for (let from = 2; from < FREE_TITLE_LIMIT; from += FREE_TITLE_BATCH) {
      const candidates: string[] = [];
      for (let n = from; n < from + FREE_TITLE_BATCH; n++) candidates.push(formatCollisionTitle(base, n));
      const held = new Set(yield* column<string>(`SELECT title FROM sessions WHERE title IN (${placeholders(candidates.length)})`, candidates));
      const free = candidates.find((c) => !held.has(c));
      if (free !== undefined) return free;
    }
    throw new ConflictError(`Every numbered form of the title "${base}" up to (${FREE_TITLE_LIMIT - 1}) is taken. Choose another title.`);
  });
}

export async function nextTitleInLineage(d: StoreDialect<unknown>, title: string): Promise<string> {
  const clean = sanitizeTitle(title);
  if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
  const { base } = parseLineageTitle(clean);
  return d.read("finding the next title", function* () {
    const max = (yield* value<number | null>("SELECT max(title_n) FROM sessions WHERE title_base = ?", [base])) ?? null;
    const next = max === null ? base : formatLineageTitle(base, Math.max(max, 1) + 1);
    return sanitizeTitle(next) ?? next; // throws when the numbered title would exceed the limit
  });
}
