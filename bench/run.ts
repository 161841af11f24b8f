import { rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openSessionDB } from "../src/index.js";
import type { SessionDB } from "../src/index.js";
import { USAGE, UsageError, parseArgs } from "./args.js";
import type { Dataset } from "./dataset.js";
import { ensureDataset, readQueries, readSessionIndex } from "./dataset.js";
import { log } from "./log.js";
import { runExportAll } from "./phases/export-all.js";
import { runGetMessages } from "./phases/get-messages.js";
import { runInsights } from "./phases/insights.js";
import { runIngest } from "./phases/ingest.js";
import { runConcurrentIngest, type ConcurrentIngestReport } from "./phases/concurrent-ingest.js";
import { runListRecent } from "./phases/list-recent.js";
import { runPrune } from "./phases/prune.js";
import { runResolveTitle } from "./phases/resolve-title.js";
import { runHugeQueryParse, runSearch } from "./phases/search.js";
import { runSize } from "./phases/size.js";
import { runTranscriptNewestPage } from "./phases/transcript-newest-page.js";
import type { BenchReport } from "./report.js";
import { buildReport } from "./report.js";
import type { Target } from "./target.js";
import { assertEmpty, prepareTarget, removeDbFiles, resolveTarget, targetSpec, wipeSessions } from "./target.js";

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every phase in the README's order, on an open, empty database. */
async function runPhases(db: SessionDB, data: Dataset, exportPath: string): Promise<BenchReport> {
  const system = `threadline ${db.capabilities.backend}`;
  log(`${system} at ${db.location}; dataset ${data.size}: ${data.meta.sessions} sessions, ${data.meta.messages} messages`);
  const ingest = await runIngest(db, data.jsonlPath);
  if (ingest.messages !== data.meta.messages) {
    log(`warning: ingested ${ingest.messages} messages but meta.json says ${data.meta.messages}`);
  }
  const index = await readSessionIndex(data.jsonlPath);
  const search = await runSearch(db, await readQueries(data.queriesPath));
  runHugeQueryParse();
  const listRecent = await runListRecent(db);
  const getMessages = await runGetMessages(db, index.ids);
  const resolveTitle = await runResolveTitle(db, index.titles);
  const exportAll = await runExportAll(db, exportPath);
  const insights = await runInsights(db, data.meta.clock);
  const prune = await runPrune(db, data.meta.clock);
  const size = await runSize(db);
  // Last, so that the long session it writes changes no figure of the shared workload.
  const transcriptNewestPage = await runTranscriptNewestPage(db, data.meta.clock);
  return buildReport({
    system,
    dataset: data.size,
    messages: data.meta.messages,
    ingest,
    search,
    listRecent,
    getMessages,
    resolveTitle,
    exportAll,
    insights,
    prune,
    size,
    transcriptNewestPage,
  });
}

/** Leaves nothing behind unless --keep: the database (file, or the server's sessions) and the export. */
async function cleanUp(db: SessionDB, target: Target, exportPath: string, keep: boolean): Promise<void> {
  if (keep) {
    await db.close();
    log(`kept ${targetSpec(target)} and ${exportPath}`);
    return;
  }
  try {
    if (target.kind === "url") log(`cleanup: deleted ${await wipeSessions(db)} session(s) from ${db.location}`);
  } finally {
    await db.close();
    if (target.kind === "file") await removeDbFiles(target.path);
    await rm(exportPath, { force: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const data = await ensureDataset(projectRoot, args.size);
  const target = resolveTarget(args.db, data.dir);
  const exportPath = join(data.dir, "export.jsonl");
  await prepareTarget(target);
  const db = await openSessionDB(targetSpec(target));
  try {
    await assertEmpty(db);
  } catch (err) {
    await db.close();
    throw err; // not ours: leave it untouched
  }
  if (args.writers !== undefined) {
    let result: ConcurrentIngestReport;
    try {
      result = await runConcurrentIngest(db, data, targetSpec(target), args.writers);
    } finally {
      await cleanUp(db, target, exportPath, args.keep);
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  let report: BenchReport;
  try {
    report = await runPhases(db, data, exportPath);
  } finally {
    await cleanUp(db, target, exportPath, args.keep);
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
