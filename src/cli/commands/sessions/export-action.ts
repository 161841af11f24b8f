/**
 * `threadline sessions export <file|-> [--source S] [--session-id SESSION…] [--media inline|skip | --media-dir FOLDER]`:
 * sessions as JSON Lines (one `threadline.session` record per line), to a file or stdout. Like the
 * positional session arguments of `show` and `delete`, `--session-id` takes the words after
 * it up to the next option, joined with spaces, so a multi-word title needs no quotes.
 * Attachments go inline as base64 (default), not at all (`--media skip`), or as files in a
 * sidecar folder (`--media-dir`).
 *
 * @module
 */
import { createWriteStream } from "node:fs";
import { unlink } from "node:fs/promises";
import { finished } from "node:stream/promises";
import type { Writable } from "node:stream";
import { EXPORT_STREAM_BUFFER_BYTES, writeLines, type StoreMaintenance } from "../../../store/index.js";
import type { CliIo } from "../../cli-output.js";
import { noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";
import { progressWanted, startProgressBar } from "../../progress-bar.js";
import { exportMediaMode, linesWithMediaDir } from "./export-media.js";
import type { MEDIA_CHOICES } from "./media-options.js";

interface ExportOptions {
  db?: string;
  json?: boolean;
  source?: string[];
  /** The words after `--session-id` (a title may be several words, typed without quotes). */
  sessionId?: string[];
  media?: (typeof MEDIA_CHOICES)[number];
  mediaDir?: string;
}

/** Runs `export`: the action of makeExportCommand (in export-command.ts), loaded when the command runs. */
export async function run(io: CliIo, file: string, options: ExportOptions): Promise<void> {
  const media = exportMediaMode(options.media, options.mediaDir);
  await withExistingDatabase(options.db, io.env, async (db) => {
    const sessionId = options.sessionId === undefined ? undefined : await resolveSessionRef(db, options.sessionId.join(" "), { note: noteOnStderr(io) });
    const sources = options.source !== undefined && options.source.length > 0 ? options.source : undefined;
    const total = progressWanted(io) ? await countToExport(db, sessionId, sources) : 0;
    const bar = startProgressBar(io, { label: "Exporting", total });
    async function* counted(lines: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      for await (const piece of lines) {
        yield piece;
        // A record with inline media comes in pieces; the last one ends the line.
        if (piece[piece.length - 1] === 0x0a) bar.increment();
      }
    }
    const selection = { ...(sessionId === undefined ? {} : { sessionId }), ...(sources === undefined ? {} : { sources }) };
    const records = counted(
      options.mediaDir === undefined ? db.exportSessionLines({ ...selection, media, chunked: true }) : linesWithMediaDir(db, selection, options.mediaDir),
    );
    let exported: number;
    try {
      exported = file === "-" ? await writeTo(io.stdout as unknown as Writable, records, false) : await writeToFile(file, records);
    } finally {
      bar.stop();
    }
    const summaryStream = file === "-" ? io.stderr : io.stdout;
    if (options.json) summaryStream.write(`${JSON.stringify({ exported, file }, null, 2)}\n`);
    else summaryStream.write(`Exported ${exported} session${exported === 1 ? "" : "s"} to ${file === "-" ? "stdout" : file}\n`);
  });
}

/** How many sessions the export will write (for the progress bar). */
async function countToExport(db: StoreMaintenance, sessionId: string | undefined, sources: string[] | undefined): Promise<number> {
  if (sessionId !== undefined) return 1;
  const stats = await db.getStats();
  if (sources === undefined) return stats.totalSessions;
  return [...new Set(sources)].reduce((sum, source) => sum + (stats.sessionsBySource[source] ?? 0), 0);
}

/** Writes the export to a file; a failed export removes the partial file. */
async function writeToFile(path: string, records: AsyncIterable<Uint8Array>): Promise<number> {
  const out = createWriteStream(path, { highWaterMark: EXPORT_STREAM_BUFFER_BYTES });
  try {
    const count = await writeTo(out, records, true);
    return count;
  } catch (error) {
    // Writes still in flight fail once the stream is destroyed; the export failed already.
    out.on("error", () => {});
    out.destroy();
    await unlink(path).catch(() => {});
    throw error;
  }
}

/** Writes JSONL lines to a stream, turning a stream error (a full disk, a closed pipe) into a rejection. */
async function writeTo(out: Writable, records: AsyncIterable<Uint8Array>, end: boolean): Promise<number> {
  let streamError: unknown = null;
  const onError = (error: unknown): void => {
    streamError ??= error;
  };
  out.on("error", onError);
  try {
    async function* guarded(): AsyncIterable<Uint8Array> {
      for await (const line of records) {
        if (streamError !== null) throw streamError;
        yield line;
      }
    }
    const count = await writeLines(guarded(), out);
    if (end) {
      out.end();
      await finished(out);
    }
    if (streamError !== null) throw streamError;
    return count;
  } finally {
    out.off("error", onError);
  }
}
