import type { Percentiles } from "./percentile.js";
import type { ExportResult } from "./phases/export-all.js";
import type { IngestResult } from "./phases/ingest.js";
import type { InsightsResult } from "./phases/insights.js";
import type { ListRecentResult } from "./phases/list-recent.js";
import type { PruneResult } from "./phases/prune.js";
import type { SearchResult } from "./phases/search.js";
import type { SizeResult } from "./phases/size.js";
import type { TranscriptNewestPageResult } from "./phases/transcript-newest-page.js";

/** Raw figures of every phase, before rounding. */
export interface PhaseResults {
  system: string;
  dataset: string;
  messages: number;
  ingest: IngestResult;
  search: SearchResult;
  listRecent: ListRecentResult;
  getMessages: Percentiles;
  resolveTitle: Percentiles;
  exportAll: ExportResult;
  insights: InsightsResult;
  prune: PruneResult;
  size: SizeResult;
  transcriptNewestPage: TranscriptNewestPageResult;
}

type P2 = { p50_ms: number; p99_ms: number };

/** The README's output object, keys in its order. */
export interface BenchReport {
  system: string;
  dataset: string;
  messages: number;
  ingest: { seconds: number; per_sec: number };
  search: { p50_ms: number; p95_ms: number; p99_ms: number; hits: number };
  list_recent: P2;
  list_recent_source: P2;
  get_messages: P2;
  resolve_title: P2;
  export_all: { seconds: number; lines: number };
  /** Not in the shared workload: `getInsights` over the 30 days before the clock, and over everything (before prune). */
  insights: { last_30_days: P2; all: P2 };
  prune: { seconds: number; deleted: number };
  size: { bytes: number };
  /** Not in the shared workload: the newest 50 messages of a 10,000-message session, ×200 (runs last). */
  transcript_newest_page: P2 & { messages: number };
}

const round = (value: number, decimals: number): number => {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
};
const ms = (value: number): number => round(value, 3);
const secs = (value: number): number => round(value, 3);
const p2 = (p: Percentiles): P2 => ({ p50_ms: ms(p.p50), p99_ms: ms(p.p99) });

/** Rounds the figures (ms and seconds to 3 decimals, rates to 1) into the output shape. */
export function buildReport(r: PhaseResults): BenchReport {
  return {
    system: r.system,
    dataset: r.dataset,
    messages: r.messages,
    ingest: { seconds: secs(r.ingest.seconds), per_sec: round(r.ingest.messages / r.ingest.seconds, 1) },
    search: { p50_ms: ms(r.search.p50), p95_ms: ms(r.search.p95), p99_ms: ms(r.search.p99), hits: r.search.hits },
    list_recent: p2(r.listRecent.all),
    list_recent_source: p2(r.listRecent.telegram),
    get_messages: p2(r.getMessages),
    resolve_title: p2(r.resolveTitle),
    export_all: { seconds: secs(r.exportAll.seconds), lines: r.exportAll.lines },
    insights: { last_30_days: p2(r.insights.last30Days), all: p2(r.insights.all) },
    prune: { seconds: secs(r.prune.seconds), deleted: r.prune.deleted },
    size: { bytes: r.size.bytes },
    transcript_newest_page: { ...p2(r.transcriptNewestPage), messages: r.transcriptNewestPage.messages },
  };
}
