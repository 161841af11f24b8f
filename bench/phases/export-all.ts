import { createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { finished } from "node:stream/promises";
import { writeLines, type SessionDB } from "../../src/index.js";
import { EXPORT_STREAM_BUFFER_BYTES } from "../../src/store/jsonl.js";
import { fmtSeconds, log } from "../log.js";
import { startRssSampler } from "../rss.js";

export interface ExportResult {
  seconds: number;
  lines: number;
}

const SAMPLE_EVERY_LINES = 64;

/**
 * exportSessionLines() written through a write stream by the product's writer, `writeLines`,
 * which honours backpressure, with the stream buffer `threadline sessions export` uses.
 */
export async function runExportAll(db: SessionDB, outPath: string): Promise<ExportResult> {
  const rssBefore = process.memoryUsage().rss;
  const sampler = startRssSampler();
  const start = performance.now();
  const out = createWriteStream(outPath, { highWaterMark: EXPORT_STREAM_BUFFER_BYTES });
  let lines = 0;
  async function* sampled(records: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    let seen = 0;
    for await (const line of records) {
      yield line;
      if (++seen % SAMPLE_EVERY_LINES === 0) sampler.sample();
    }
  }
  try {
    lines = await writeLines(sampled(db.exportSessionLines()), out);
    out.end();
    await finished(out);
  } catch (err) {
    out.destroy();
    throw err;
  } finally {
    const peak = sampler.stop();
    log(`export_all: peak RSS ${mib(peak)} (before ${mib(rssBefore)})`);
  }
  const seconds = (performance.now() - start) / 1000;
  const bytes = (await stat(outPath)).size;
  log(`export_all: ${lines} lines, ${mib(bytes)} to ${outPath} in ${fmtSeconds(seconds)}`);
  return { seconds, lines };
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
