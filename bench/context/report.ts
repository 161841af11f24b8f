/** The context benchmark's output: one JSON object (stdout) and a table (stderr). */
import type { factFigures, latencyByKind, LatencySpread, requestFigures } from "./analysis.js";

/** The JSON report. */
export interface ContextReport {
  bench: "context";
  system: string;
  machine: Record<string, unknown>;
  setup: Record<string, unknown>;
  turns: {
    sent: number;
    ok: number;
    errors: number;
    error_statuses: Record<string, number>;
    replies_answering_their_turn: number;
    seconds: number;
    turns_per_sec: number;
    /** Everything had finished (no request, store call or turn running) within 60 s of the last reply. */
    drained: boolean;
  };
  requests: ReturnType<typeof requestFigures>;
  compression: {
    /** Sessions of the conversation ended with reason `compression`. */
    compressions: number;
    /** Summary requests the fake model received. */
    summary_calls: number;
    summary_calls_refused: number;
    turns_with_a_summary: number;
    lineage: Record<string, unknown>;
  };
  latency: ReturnType<typeof latencyByKind>;
  early_fact: ReturnType<typeof factFigures>;
  store: {
    /** Wall ms with at least one SessionDB call in progress. */
    busy_ms: number;
    /** Wall ms from the first turn to the end of the drain. */
    wall_ms: number;
    share: number;
    busy_ms_per_turn: number;
    /** The first tenth of the turns: store ms per turn, latency p50. */
    first_tenth: { turns: number; busy_ms_per_turn: number; latency_p50_ms: number | null };
    /** The last tenth. */
    last_tenth: { turns: number; busy_ms_per_turn: number; latency_p50_ms: number | null };
    methods: Record<string, { calls: number; ms: number }>;
    /** The runner's own timed store calls (threadline_store_seconds), ms per turn. */
    runner_timed_ms_per_turn: Record<string, number>;
  };
  gateway_log: { counts: Record<string, number>; warnings: string[]; context_lines: string[] };
}

const cell = (s: LatencySpread): string => (s.turns === 0 ? "—" : `${s.p50_ms} / ${s.p99_ms} (max ${s.max_ms})`);

/** The human table. */
export function formatTable(r: ContextReport): string {
  const q = r.requests;
  const lat = r.latency;
  const rows: Array<[string, string]> = [
    ["system", `${r.system}; window ${q.window} tokens (${String(r.setup["window_setting"])}); model ${String(r.setup["model"])}`],
    [
      "turns",
      `${r.turns.sent} sent, ${r.turns.ok} ok, ${r.turns.errors} errors ${JSON.stringify(r.turns.error_statuses)}, ${r.turns.replies_answering_their_turn} replies answer their turn; ${r.turns.seconds} s (${r.turns.turns_per_sec}/s)${r.turns.drained ? "" : "; NOT DRAINED"}`,
    ],
    [
      "largest request",
      `${q.largest_tokens} tokens (${q.largest_kind}${q.largest_turn === null ? "" : `, turn ${q.largest_turn}`}) — ${q.under_window ? "under" : "OVER"} the window of ${q.window}`,
    ],
    ["over-window refusals", `${q.over_window_refusals} ${JSON.stringify(q.refusals_by_kind)}`],
    [
      "turn requests",
      `tokens p50 ${q.turn_request_tokens.p50} / p99 ${q.turn_request_tokens.p99} / max ${q.turn_request_tokens.max}; messages p50 ${q.turn_request_messages.p50} / max ${q.turn_request_messages.max}; by kind ${JSON.stringify(q.requests_by_kind)}`,
    ],
    [
      "compressions",
      `${r.compression.compressions} (sessions ${String(r.compression.lineage["sessions"])}, children starting with the summary ${String(r.compression.lineage["children_starting_with_summary"])}/${String(r.compression.lineage["children"])}, last title ${JSON.stringify(r.compression.lineage["last_title"])})`,
    ],
    ["summary calls", `${r.compression.summary_calls} (${r.compression.summary_calls_refused} refused) after ${r.compression.turns_with_a_summary} turns`],
    ["latency p50 / p99 ms", `plain ${cell(lat.plain)} [${lat.plain.turns}]`],
    ["", `triggering a summary ${cell(lat.trigger)} [${lat.trigger.turns}] → added ${lat.added.trigger_p50_ms} / ${lat.added.trigger_p99_ms}`],
    ["", `right after one ${cell(lat.next_after_trigger)} [${lat.next_after_trigger.turns}] → added ${lat.added.next_p50_ms} / ${lat.added.next_p99_ms}`],
    [
      "turn 1's fact",
      `in the last request: ${r.early_fact.in_last_turn_request ? "yes" : "no"}; last turn that carried it ${r.early_fact.last_turn_with_fact}; late-half requests with it ${r.early_fact.late_half_requests_with_fact}/${r.early_fact.late_half_requests}`,
    ],
    [
      "store share",
      `${(r.store.share * 100).toFixed(1)} % (${r.store.busy_ms} of ${r.store.wall_ms} ms wall; ${r.store.busy_ms_per_turn} ms/turn); runner's timed calls ms/turn ${JSON.stringify(r.store.runner_timed_ms_per_turn)}`,
    ],
    [
      "first / last tenth",
      `store ${r.store.first_tenth.busy_ms_per_turn} → ${r.store.last_tenth.busy_ms_per_turn} ms/turn; latency p50 ${r.store.first_tenth.latency_p50_ms} → ${r.store.last_tenth.latency_p50_ms} ms`,
    ],
    [
      "store calls (ms)",
      Object.entries(r.store.methods)
        .slice(0, 6)
        .map(([name, m]) => `${name} ${m.calls}× ${m.ms}`)
        .join(", "),
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  const warn = Object.entries(r.gateway_log.counts).filter(([k]) => !k.startsWith("info"));
  if (warn.length > 0) lines.push(`${"gateway log".padEnd(width)}  ${warn.map(([k, n]) => `${n}× ${k}`).join("; ")}`);
  return lines.join("\n");
}
