/**
 * JSON Lines helpers for export and import: write records to a stream with
 * back-pressure, read lines from a stream without loading it whole.
 *
 * @module
 */
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";

/** Writes each record as one JSON line, waiting for the stream to drain; returns the number of lines. */
export async function writeJsonl(records: AsyncIterable<unknown>, out: Writable): Promise<number> {
  let lines = 0;
  for await (const record of records) {
    if (!out.write(`${JSON.stringify(record)}\n`)) await once(out, "drain");
    lines += 1;
  }
  return lines;
}

/** The lines of a text stream, one at a time (for `importSessions`). */
export function readJsonlLines(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}
