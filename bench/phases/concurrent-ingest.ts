import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { SessionDB } from "../../src/index.js";
import type { Dataset } from "../dataset.js";
import { log } from "../log.js";

const WORKER = fileURLToPath(new URL("../ingest-worker.ts", import.meta.url));

/** What `--writers N` prints: total ingest throughput of N processes sharing one database. */
export interface ConcurrentIngestReport {
  system: string;
  dataset: string;
  mode: "concurrent-ingest";
  writers: number;
  messages: number;
  seconds: number;
  messagesPerSecond: number;
}

/** Runs N writer processes, each ingesting its slice of the sessions (one durable call per line), and times the whole. */
export async function runConcurrentIngest(db: SessionDB, data: Dataset, target: string, writers: number): Promise<ConcurrentIngestReport> {
  const system = `threadline ${db.capabilities.backend}`;
  log(`${system}: concurrent ingest of ${data.size} with ${writers} writer process(es)`);
  const start = performance.now();
  const results = await Promise.all(Array.from({ length: writers }, (_, i) => runWorker([data.jsonlPath, target, String(i), String(writers)])));
  const seconds = (performance.now() - start) / 1000;
  const messages = results.reduce((sum, r) => sum + r.messages, 0);
  const stats = await db.getStats();
  if (stats.totalMessages !== messages) log(`warning: workers report ${messages} messages, the store holds ${stats.totalMessages}`);
  return {
    system,
    dataset: data.size,
    mode: "concurrent-ingest",
    writers,
    messages,
    seconds: Number(seconds.toFixed(3)),
    messagesPerSecond: Math.round(messages / seconds),
  };
}

function runWorker(args: string[]): Promise<{ messages: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`ingest worker ${args[2]} exited with ${code}`));
      else resolve(JSON.parse(out) as { messages: number });
    });
  });
}
