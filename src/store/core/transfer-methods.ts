/**
 * Export and import of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import type { ExportOptions, ImportReport, SessionRecord } from "../contract.js";
import { NotFoundError } from "../errors.js";
import { checkUserIdFilter } from "../execution-input.js";
import { checkId, checkNameList } from "../input-validation.js";
import { runImport } from "../session-import.js";
import type { SessionRow } from "../session-rows.js";
import { assertOpen } from "./assert-open.js";
import { sessionRow } from "./lineage-steps.js";
import { requireRow } from "./session-steps.js";
import { type Steps, all, placeholders } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { exportLine, exportMessagesSql, exportRecord, importRecord } from "./transfer-steps.js";

export async function* exportSessions(d: StoreDialect<unknown>, options: ExportOptions = {}): AsyncIterable<SessionRecord> {
  const messagesSql = exportMessagesSql(d, options.includeRewound === true);
  yield* exportEach(d, options, (row) => exportRecord(d, row, messagesSql));
}

export async function* exportSessionLines(d: StoreDialect<unknown>, options: ExportOptions = {}): AsyncIterable<Uint8Array> {
  const includeRewound = options.includeRewound === true;
  const messagesSql = exportMessagesSql(d, includeRewound);
  yield* exportEach(d, options, (row) => exportLine(d, row, messagesSql, includeRewound));
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

export async function importSessions(d: StoreDialect<unknown>, lines: AsyncIterable<string> | Iterable<string>): Promise<ImportReport> {
  assertOpen(d);
  try {
    return await runImport(lines, (record, waiting) => d.write(`importing session ${record.session.id}`, () => importRecord(d, record, waiting)));
  } finally {
    // Even a failed import may have written sessions before it stopped.
    d.afterBulkChange();
  }
}
