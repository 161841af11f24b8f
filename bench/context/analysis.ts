/**
 * Turns the driver's timings, the fake model's request log and the database's lineage into
 * the report's figures.
 *
 * @module
 */
import { nearestRank } from "../percentile.js";
import type { FakeModelRequest } from "./fake-model.js";

/** One turn as the driver saw it. */
export interface TurnSample {
  turn: number;
  ms: number;
  status: number;
  /** The reply is the fake model's answer to this turn (its first words). */
  answered: boolean;
}

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/** p50 / p99 / max in ms, and how many. */
export interface LatencySpread {
  turns: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

export function latencySpread(values: readonly number[]): LatencySpread {
  if (values.length === 0) return { turns: 0, p50_ms: null, p99_ms: null, max_ms: null };
  return { turns: values.length, p50_ms: round3(nearestRank(values, 50)), p99_ms: round3(nearestRank(values, 99)), max_ms: round3(Math.max(...values)) };
}

/**
 * Which turn each summary call belongs to: the turn whose model request came last before the
 * summary request (a summary made after a turn's reply belongs to that turn; one made before a
 * turn's own model call, holding the turn up, belongs to the turn before, and the holding-up
 * shows in the "next turn" figures).
 */
export function summariesByTurn(requests: readonly FakeModelRequest[]): Map<number, number> {
  const byTurn = new Map<number, number>();
  let current: number | null = null;
  for (const r of [...requests].sort((a, b) => a.seq - b.seq)) {
    if (r.kind === "turn") current = r.turn;
    else if (r.kind === "summary" && current !== null) byTurn.set(current, (byTurn.get(current) ?? 0) + 1);
  }
  return byTurn;
}

/** Latency of plain turns, of turns that triggered a summary, and of the turns right after those. */
export function latencyByKind(samples: readonly TurnSample[], triggers: ReadonlyMap<number, number>) {
  const ok = samples.filter((s) => s.status === 200);
  const isTrigger = (k: number): boolean => triggers.has(k);
  const plain = ok.filter((s) => !isTrigger(s.turn) && !isTrigger(s.turn - 1)).map((s) => s.ms);
  const trigger = ok.filter((s) => isTrigger(s.turn)).map((s) => s.ms);
  const after = ok.filter((s) => !isTrigger(s.turn) && isTrigger(s.turn - 1)).map((s) => s.ms);
  const p = latencySpread(plain);
  const t = latencySpread(trigger);
  const a = latencySpread(after);
  const diff = (x: number | null, y: number | null): number | null => (x === null || y === null ? null : round3(x - y));
  return {
    plain: p,
    trigger: t,
    next_after_trigger: a,
    added: {
      trigger_p50_ms: diff(t.p50_ms, p.p50_ms),
      trigger_p99_ms: diff(t.p99_ms, p.p99_ms),
      next_p50_ms: diff(a.p50_ms, p.p50_ms),
      next_p99_ms: diff(a.p99_ms, p.p99_ms),
    },
  };
}

/** The sizes of the requests the model was sent. */
export function requestFigures(requests: readonly FakeModelRequest[], window: number) {
  const turnRequests = requests.filter((r) => r.kind === "turn");
  const tokens = turnRequests.map((r) => r.tokens);
  const largest = requests.reduce<FakeModelRequest | null>((best, r) => (best === null || r.tokens > best.tokens ? r : best), null);
  const byKind: Record<string, number> = {};
  const refusedByKind: Record<string, number> = {};
  for (const r of requests) {
    byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
    if (r.refused) refusedByKind[r.kind] = (refusedByKind[r.kind] ?? 0) + 1;
  }
  return {
    window,
    largest_tokens: largest?.tokens ?? 0,
    largest_kind: largest?.kind ?? null,
    largest_turn: largest?.turn ?? null,
    under_window: (largest?.tokens ?? 0) <= window,
    over_window_refusals: requests.filter((r) => r.refused).length,
    refusals_by_kind: refusedByKind,
    requests_by_kind: byKind,
    turn_request_tokens: {
      p50: tokens.length === 0 ? null : nearestRank(tokens, 50),
      p99: tokens.length === 0 ? null : nearestRank(tokens, 99),
      max: tokens.length === 0 ? null : Math.max(...tokens),
    },
    turn_request_messages: {
      p50:
        turnRequests.length === 0
          ? null
          : nearestRank(
              turnRequests.map((r) => r.messages),
              50,
            ),
      max: turnRequests.length === 0 ? null : Math.max(...turnRequests.map((r) => r.messages)),
    },
  };
}

/** Whether turn 1's fact still reached the model late in the conversation. */
export function factFigures(requests: readonly FakeModelRequest[], turns: number) {
  const turnRequests = requests.filter((r) => r.kind === "turn");
  const lastTurn = turnRequests.filter((r) => r.turn === turns).at(-1);
  const withFact = turnRequests.filter((r) => r.fact);
  const late = turnRequests.filter((r) => r.turn !== null && r.turn > turns / 2);
  return {
    in_last_turn_request: lastTurn?.fact ?? false,
    last_turn_with_fact: withFact.reduce((max, r) => Math.max(max, r.turn ?? 0), 0),
    turn_requests_with_fact: withFact.length,
    turn_requests: turnRequests.length,
    late_half_requests_with_fact: late.filter((r) => r.fact).length,
    late_half_requests: late.length,
  };
}
