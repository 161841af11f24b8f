/**
 * Renders a sanitised query as an FTS5 `MATCH` expression.
 *
 * @module
 */

import type { ParsedQuery } from "../search/search-query.js";

/**
 * The FTS5 `MATCH` string for `q` (as returned by `parseSearchQuery`, so never empty):
 * each operand becomes a quoted phrase of its tokens (`"chat send"`), followed by ` *`
 * when it is a prefix; operators become ` AND `, ` OR `, ` NOT `. Every token is
 * quoted, so nothing the user typed is ever read as FTS5 syntax.
 */
export function toFts5Match(q: ParsedQuery): string {
  let out = "";
  for (const item of q.items) {
    if (item.kind === "operator") {
      out += ` ${item.op} `;
    } else {
      out += `"${item.tokens.join(" ").replaceAll('"', '""')}"${item.prefix ? " *" : ""}`;
    }
  }
  return out;
}
