/**
 * The media benchmark's export, in a process of its own so its peak memory is its own:
 * `export-child.ts <target> <out.jsonl> <inline|skip|dir:FOLDER>` opens the database, exports
 * every session as `threadline sessions export` does (`exportSessionLines` chunked + `writeLines` into a
 * file; `dir:` through the CLI's sidecar writer) and prints one JSON line: seconds, bytes
 * written, lines, the resident set after opening (`rss_open_bytes`) and the process's peak
 * (`max_rss_bytes`, from `process.resourceUsage().maxRSS`).
 *
 * @module
 */
import { createWriteStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { finished } from "node:stream/promises";
import { linesWithMediaDir } from "../../src/cli/commands/sessions/export-media.js";
import { openSessionDB, writeLines } from "../../src/index.js";
import { EXPORT_STREAM_BUFFER_BYTES } from "../../src/store/index.js";

const [target, out, mode] = process.argv.slice(2) as [string, string, string];
const db = await openSessionDB(target);
const rssOpen = process.memoryUsage().rss;
const file = createWriteStream(out, { highWaterMark: EXPORT_STREAM_BUFFER_BYTES });
const t0 = performance.now();
const lines = mode.startsWith("dir:")
  ? await writeLines(linesWithMediaDir(db, {}, mode.slice("dir:".length)), file)
  : await writeLines(db.exportSessionLines({ media: mode as "inline" | "skip", chunked: true }), file);
file.end();
await finished(file);
const seconds = (performance.now() - t0) / 1000;
let bytes = (await stat(out)).size;
if (mode.startsWith("dir:")) {
  const folder = mode.slice("dir:".length);
  for (const name of await readdir(folder)) bytes += (await stat(join(folder, name))).size;
}
await db.close();
process.stdout.write(`${JSON.stringify({ seconds, bytes, lines, rss_open_bytes: rssOpen, max_rss_bytes: process.resourceUsage().maxRSS * 1024 })}\n`);
