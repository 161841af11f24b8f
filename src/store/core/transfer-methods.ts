/**
 * Export and import of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import type { ExportOptions, ImportOptions, ImportReport, SessionRecord } from "../contract.js";
import { InvalidInputError, NotFoundError } from "../errors.js";
import { checkUserIdFilter } from "../execution-input.js";
import { checkId, checkNameList } from "../input-validation.js";
import { runImport } from "../session-import.js";
import type { SessionRow } from "../session-rows.js";
import { assertOpen } from "./assert-open.js";
import { sessionRow } from "./lineage-steps.js";
import { checkMediaMode, exportedMedia, linePieces, recordMedia, storeRecordMedia } from "./media-transfer.js";
import { requireRow } from "./session-steps.js";
import { type Steps, all, placeholders } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { exportLine, exportMessagesSql, exportRecord, importRecord } from "./transfer-steps.js";

/**
 * Records with their media (`options.media`): the entries are read with the session, in its
 * read; their bytes (inline) after it, so a record holds every blob of its session as base64.
 */
export async function* exportSessions(d: StoreDialect<unknown>, options: ExportOptions = {}): AsyncIterable<SessionRecord> {
  const includeRewound = options.includeRewound === true;
  const mode = checkMediaMode(options.media);
  const messagesSql = exportMessagesSql(d, includeRewound);
  const read = function* (row: SessionRow) {
    const record = yield* exportRecord(d, row, messagesSql);
    return { record, entries: mode === "skip" ? [] : yield* exportedMedia(row.id, includeRewound) };
  };
  for await (const { record, entries } of exportEach(d, options, read)) {
    if (entries.length > 0) record.media = await recordMedia(d, record.session.id, entries, mode);
    yield record;
  }
}

/**
 * Lines with their media (`options.media`); with `options.chunked`, a line with inline media
 * comes in pieces, each blob's base64 a stored chunk at a time (see {@link linePieces}),
 * otherwise the pieces are joined into the line.
 */
export async function* exportSessionLines(d: StoreDialect<unknown>, options: ExportOptions = {}): AsyncIterable<Uint8Array> {
  const includeRewound = options.includeRewound === true;
  const mode = checkMediaMode(options.media);
  const messagesSql = exportMessagesSql(d, includeRewound);
  const read = function* (row: SessionRow) {
    const line = yield* exportLine(d, row, messagesSql, includeRewound);
    return { id: row.id, line, entries: mode === "skip" ? [] : yield* exportedMedia(row.id, includeRewound) };
  };
  for await (const { id, line, entries } of exportEach(d, options, read)) {
    if (options.chunked === true) {
      yield* linePieces(d, id, line, entries, mode);
      continue;
    }
    const pieces: Uint8Array[] = [];
    for await (const piece of linePieces(d, id, line, entries, mode)) pieces.push(piece);
    yield pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  }
}

/** The sessions an export selects, oldest first, each read fresh and turned into `T` by `each` in a read of its own. */
async function* exportEach<T>(d: StoreDialect<unknown>, options: ExportOptions, each: (row: SessionRow) => Steps<T>): AsyncIterable<T> {
  const sources = checkNameList(options.sources, "sources");
  const userId = checkUserIdFilter(options.userId);

  if (options.sessionId !== undefined) {
    const id = checkId(options.sessionId, "sessionId");
    yield await d.read("exporting a session", function* () {
      const row = yield* requireRow(d, id);
      // Another user's session is not found (its existence is not disclosed).
      if (userId !== null && d.decodeText(row.user_id) !== userId) {
        throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
      }
      return yield* each(row);
    });
    return;
  }
  const filterParams: unknown[] = [];
  let filter = "";
  if (userId !== null) {
    filter += " AND user_id = ?";
    filterParams.push(d.encodeText(userId));
  }
  if (sources !== null) {
    filter += ` AND source IN (${placeholders(sources.length)})`;
    filterParams.push(...sources);
  }
  const pageSql = `SELECT * FROM sessions WHERE (started_at, id) > (?, ?)${filter} ORDER BY started_at, id LIMIT 50`;
  let after: [number, string] = [-Infinity, ""];
  for (;;) {
    // One page of sessions at a time, each with its messages: memory stays bounded by the largest session.
    const rows = await d.read("exporting sessions", () => all<SessionRow>(pageSql, [after[0], after[1], ...filterParams]));
    if (rows.length === 0) return;
    for (const row of rows) {
      const exported = await d.read("exporting a session", function* () {
        const fresh = yield* sessionRow(row.id);
        return fresh === undefined ? null : yield* each(fresh);
      });
      if (exported !== null) yield exported;
    }
    const last = rows[rows.length - 1]!;
    after = [last.started_at, last.id];
  }
}

/** Imports records; each record's media are checked and stored before its session (see {@link storeRecordMedia}). */
export async function importSessions(
  d: StoreDialect<unknown>,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  assertOpen(d);
  if (options.mediaDir !== undefined && (typeof options.mediaDir !== "string" || options.mediaDir === "")) {
    throw new InvalidInputError("mediaDir must be a folder path.", { field: "mediaDir" });
  }
  try {
    return await runImport(lines, async (record, waiting) => {
      await storeRecordMedia(d, record, options);
      return d.write(`importing session ${record.session.id}`, () => importRecord(d, record, waiting));
    });
  } finally {
    // Even a failed import may have written sessions before it stopped.
    d.afterBulkChange();
  }
}
