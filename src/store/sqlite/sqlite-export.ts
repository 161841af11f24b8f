/**
 * A session's export line written by SQLite itself: the messages array of a record is built
 * in one statement (`json_quote` for text, the stored JSON text as stored, numbers as
 * `JSON.stringify` writes them) and comes back as one BLOB, which goes to the file as it is.
 * No message text becomes a JavaScript string on the way (UTF-8 → V8 string →
 * `JSON.stringify` → UTF-8 was most of an export's time).
 *
 * The line is byte for byte what `JSON.stringify(record) + "\n"` gives for the same row:
 * - `json_quote` escapes exactly as `JSON.stringify` does (`\"`, `\\`, `\b \f \n \r \t`,
 *   `\u00xx` for other controls; everything else as is) for valid UTF-8;
 * - a number is written by SQL when SQLite's text of it is JavaScript's (an integer below
 *   2^53) and otherwise by {@link JSON_NUMBER_FUNCTION}, a JavaScript function (SQLite writes
 *   `100.0`, `1.0e+21` and 17 digits where 16 suffice);
 * - JSON stored as text (content parts, tool calls, reasoning details) is copied as stored:
 *   Threadline stores what `JSON.stringify` wrote, which it writes again unchanged.
 *
 * What SQL cannot write the same way, {@link exportMessagesLine} leaves to the caller (`null`):
 * stored JSON that is not valid JSON (the generic path fails on it as before), text that is
 * not valid UTF-8 (the generic path reads it with U+FFFD, as before) and a BLOB in a text
 * column, which only another program writing to the file can leave there.
 *
 * @module
 */
import { isUtf8 } from "node:buffer";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The SQL function that writes a number as `JSON.stringify` does (registered by {@link registerExportFunctions}). */
export const JSON_NUMBER_FUNCTION = "threadline_json_number";

/** 2^53: below it SQLite's text of an integral number is JavaScript's. */
const EXACT_INTEGERS = 9007199254740992;

/** Registers the SQL functions the export line needs on a connection. */
export function registerExportFunctions(conn: SqliteConnection): void {
  conn.db.function(JSON_NUMBER_FUNCTION, { deterministic: true }, (value: unknown) => JSON.stringify(value));
}

/** A nullable number column as JSON, as `JSON.stringify` writes it. */
function jsonNumber(column: string): string {
  return (
    `CASE WHEN ${column} IS NULL THEN 'null' ` +
    `WHEN ${column} = CAST(${column} AS INTEGER) AND abs(${column}) < ${EXACT_INTEGERS} THEN CAST(CAST(${column} AS INTEGER) AS TEXT) ` +
    `ELSE ${JSON_NUMBER_FUNCTION}(${column}) END`
  );
}

/** A nullable column holding JSON text, as stored. */
function storedJson(column: string): string {
  return `coalesce(${column}, 'null')`;
}

/**
 * One message as its JSON object: the keys and order of `toExportedMessage` (sqlite-rows.ts).
 * `json_quote(NULL)` is `null`.
 */
const MESSAGE_JSON =
  `concat('{"role":', json_quote(role), ` +
  `',"content":', CASE WHEN content IS NULL THEN 'null' WHEN content_parts THEN content ELSE json_quote(content) END, ` +
  `',"toolCalls":', ${storedJson("tool_calls")}, ` +
  `',"toolCallId":', json_quote(tool_call_id), ` +
  `',"toolName":', json_quote(tool_name), ` +
  `',"tokenCount":', ${jsonNumber("token_count")}, ` +
  `',"finishReason":', json_quote(finish_reason), ` +
  `',"reasoning":', json_quote(reasoning), ` +
  `',"reasoningDetails":', ${storedJson("reasoning_details")}, ` +
  `',"platformMessageId":', json_quote(platform_message_id), ` +
  `',"timestamp":', ${jsonNumber("timestamp")}, ` +
  `',"rewoundAt":', ${jsonNumber("rewound_at")}, '}')`;

/** 1 when the row's stored JSON columns all hold valid JSON (what `JSON.parse` accepts), else 0. */
const STORED_JSON_VALID =
  "((content IS NULL OR NOT content_parts OR json_valid(content)) " +
  "AND (tool_calls IS NULL OR json_valid(tool_calls)) " +
  "AND (reasoning_details IS NULL OR json_valid(reasoning_details)))";

/**
 * The statement: `?1` the record's JSON up to its messages, `?2` the session id. The ordered
 * subquery keeps `group_concat` in id order: SQLite neither flattens a subquery with an ORDER BY
 * into an aggregate query (query flattener, restriction 16) nor drops that ORDER BY when the outer
 * query uses an aggregate other than count, min or max (the omit-ORDER-BY optimisation, condition
 * 4). An ORDER BY inside `group_concat` would sort every line again (measured: ~20% slower).
 */
function lineSql(includeRewound: boolean): string {
  return (
    `SELECT CAST(concat(?, '[', group_concat(line, ','), ']}', char(10)) AS BLOB), min(valid) FROM ` +
    `(SELECT ${MESSAGE_JSON} AS line, ${STORED_JSON_VALID} AS valid FROM messages ` +
    `WHERE session_id = ?${includeRewound ? "" : " AND rewound_at IS NULL"} ORDER BY id)`
  );
}

const LINE_SQL = { visible: lineSql(false), all: lineSql(true) };

/**
 * A session's export line (`head`, then its messages as a JSON array, `}` and `\n`), as UTF-8
 * bytes; `null` when SQL cannot write it exactly as the generic path would (see the module
 * comment). `head` is the record's JSON up to and including `"messages":`.
 */
export function exportMessagesLine(conn: SqliteConnection, head: string, sessionId: string, includeRewound: boolean): Buffer | null {
  const statement = conn.stmt(includeRewound ? LINE_SQL.all : LINE_SQL.visible);
  let row: [Buffer, number | null];
  try {
    row = statement.raw(true).get(head, sessionId) as [Buffer, number | null];
  } catch (error) {
    // A value SQL cannot quote (a BLOB in a text column: "JSON cannot hold BLOB values"): the
    // generic path writes whatever it wrote before. Busy, I/O, damage and size errors are its own.
    if ((error as { code?: unknown }).code === "SQLITE_ERROR") return null;
    throw error;
  } finally {
    // raw() sticks to the cached statement.
    statement.raw(false);
  }
  const [line, valid] = row;
  if (valid === 0 || !isUtf8(line)) return null;
  return line;
}
