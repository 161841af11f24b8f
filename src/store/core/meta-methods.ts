/**
 * Small named values (meta) of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import type { ListMetaOptions, MetaEntry, Page } from "../contract.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { InvalidInputError } from "../errors.js";
import { checkId, checkLimit, optionalText } from "../input-validation.js";
import { all, run, value } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

export async function getMeta(d: StoreDialect<unknown>, key: string): Promise<string | null> {
  checkId(key, "key");
  return d.read("reading meta", function* () {
    const stored = yield* value<string>("SELECT value FROM meta WHERE key = ?", [key]);
    return stored === undefined ? null : d.decodeText(stored);
  });
}

export async function setMeta(d: StoreDialect<unknown>, key: string, value: string): Promise<void> {
  checkId(key, "key");
  if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
  const stored = d.encodeText(value);
  await d.write("writing meta", () => run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, stored]));
}

export async function deleteMeta(d: StoreDialect<unknown>, key: string): Promise<boolean> {
  checkId(key, "key");
  return d.write("deleting meta", function* () {
    return (yield* run("DELETE FROM meta WHERE key = ?", [key])) > 0;
  });
}

/**
 * The store's own bookkeeping in `meta`, which {@link listMeta} leaves out: SQLite's search-index
 * watermark (a message id of this database) and the last automatic prune (retention-methods.ts).
 */
const STORE_META_KEYS = ["fts.indexed_upto", "auto_prune.last_run_at"];

/** The ordering name of a meta listing's cursor. */
const META_ORDER = "meta";

export async function listMeta(d: StoreDialect<unknown>, options: ListMetaOptions = {}): Promise<Page<MetaEntry>> {
  const limit = checkLimit(options.limit, 100);
  const after = options.cursor === undefined || options.cursor === null ? null : decodeCursor(options.cursor, META_ORDER).id;
  const rows = await d.read("listing meta", () =>
    all<{ key: string; value: string }>(`SELECT key, value FROM meta WHERE key NOT IN (?, ?)${after === null ? "" : " AND key > ?"} ORDER BY key LIMIT ?`, [
      ...STORE_META_KEYS,
      ...(after === null ? [] : [after]),
      limit + 1,
    ]),
  );
  const items = rows.slice(0, limit).map((row) => ({ key: row.key, value: d.decodeText(row.value) ?? "" }));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ order: META_ORDER, key: 0, id: last.key }) : null };
}
