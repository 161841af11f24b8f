import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { finished } from "node:stream/promises";
import type { SessionDB } from "../../src/index.js";
import { fmtSeconds, log } from "../log.js";
import { startRssSampler } from "../rss.js";

export interface ExportResult {
  seconds: number;
  lines: number;
}

const SAMPLE_EVERY_LINES = 64;

/** exportSessions() written as JSONL through a write stream that honours backpressure. */
export async function runExportAll(db: SessionDB, outPath: string): Promise<ExportResult> {
  const rssBefore = process.memoryUsage().rss;
  const sampler = startRssSampler();
  const start = performance.now();
  const out = createWriteStream(outPath);
  let lines = 0;
  let bytes = 0;
  try {
    for await (const record of db.exportSessions()) {
      const text = JSON.stringify(record) + "\n";
      bytes += Buffer.byteLength(text);
      lines++;
      if (!out.write(text)) await once(out, "drain");
      if (lines % SAMPLE_EVERY_LINES === 0) sampler.sample();
    }
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
  log(`export_all: ${lines} lines, ${mib(bytes)} to ${outPath} in ${fmtSeconds(seconds)}`);
  return { seconds, lines };
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
