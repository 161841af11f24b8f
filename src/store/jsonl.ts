/**
 * JSON Lines helpers for export and import: write records to a stream with
 * back-pressure, read lines from a stream without loading it whole.
 *
 * @module
 */
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";

/**
 * Writes each record as one JSON line, waiting for the stream to drain; returns the number of lines.
 *
 * When a write fills the stream, the next record is read and serialised while the stream drains,
 * and only written after `drain`: the stream holds at most its high-water mark plus one line, and
 * reading overlaps writing instead of waiting for every flush.
 */
export async function writeJsonl(records: AsyncIterable<unknown>, out: Writable): Promise<number> {
  async function* lines(): AsyncIterable<string> {
    for await (const record of records) yield `${JSON.stringify(record)}\n`;
  }
  return writeLines(lines(), out);
}

/**
 * Writes lines that are already serialised (as `SessionDB.exportSessionLines` yields them: a
 * line may come in several pieces, only its last ending in `\n`) as they are, with the
 * back-pressure of {@link writeJsonl}; returns the number of lines (pieces ending in `\n`).
 */
export async function writeLines(lines: AsyncIterable<Uint8Array | string>, out: Writable): Promise<number> {
  let count = 0;
  let draining: Promise<unknown> | null = null;
  for await (const line of lines) {
    if (draining !== null) {
      await draining;
      draining = null;
    }
    if (!out.write(line)) {
      draining = once(out, "drain");
      // Awaited before the next write or at the end; an error before then must not count as unhandled.
      draining.catch(() => {});
    }
    if (endsLine(line)) count += 1;
  }
  if (draining !== null) await draining;
  return count;
}

/** Whether a piece is the end of a line. */
function endsLine(piece: Uint8Array | string): boolean {
  return typeof piece === "string" ? piece.endsWith("\n") : piece.length > 0 && piece[piece.length - 1] === 0x0a;
}

/**
 * A good `highWaterMark` for a file an export is written to: 1 MiB. With the default (16 KiB) nearly
 * every line fills the stream, and the next line is read while one write is under way; with room for
 * several lines, reading runs ahead of the file writes (medium benchmark export: ~10% faster).
 */
export const EXPORT_STREAM_BUFFER_BYTES = 1024 * 1024;

/** The lines of a text stream, one at a time (for `importSessions`). */
export function readJsonlLines(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}
