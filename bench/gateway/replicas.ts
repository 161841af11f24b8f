/**
 * The replicas mode of `bench:gateway` (`--db postgres://… --replicas 1,2`): N `threadline
 * serve` processes (this checkout's dist/) on one PostgreSQL database, each on its own
 * loopback port, driven by C closed-loop conversations that the driver shares out over them
 * (sticky: a conversation stays on one replica, as behind a load balancer with session
 * affinity; or round-robin per turn, so every turn crosses to another replica than the last).
 *
 * Every run (one N, one C) gets a fresh schema (`<prefix>_n<N>_c<C>`, dropped afterwards
 * unless `--keep`), fresh replicas (`gateway.replicaId` r1, r2, …; `gateway.leases` left at
 * `auto`, which is on for PostgreSQL) and, with `--model-delay-ms`, a fresh fake provider.
 * Reported per run: turns/s, end-to-end latency, per replica its turns and CPU, the
 * PostgreSQL server's CPU (the replicas' backends and its background processes), commits
 * and WAL flushes per turn, the rows each table of the schema got per turn, and what the
 * replicas' backends were waiting on (pg_stat_activity sampled every {@link WAIT_SAMPLE_MS} ms).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import { log } from "../log.js";
import type { DriverHandle } from "./driver-child.js";
import { parseMetrics, readCpuTimes, startGatewayChild, type CpuTimes, type GatewayChild } from "./gateway-child.js";
import type { CpuPerTurn } from "./phases.js";
import type { ProbeSample, ReplicaSpread } from "./protocol.js";
import { mean, round1, round3, spread, type Spread } from "./stats.js";
import { startProviderChild, type ProviderChild } from "./ttft.js";

/** How often the wait sampler reads pg_stat_activity. */
export const WAIT_SAMPLE_MS = 100;
/** application_name prefix of the replicas' connections (how the samplers find their backends). */
const APP_PREFIX = "tlbench_";

export interface ReplicasOptions {
  /** postgres:// URL of the database (a `schema` parameter, if any, becomes the schemas' prefix). */
  db: string;
  /** Replica counts, each its own run (in this order) at every C. */
  replicas: number[];
  conversations: number[];
  turns: number;
  spread: ReplicaSpread;
  /** A fake provider answering after this many ms; null: the built-in echo agent. */
  modelDelayMs: number | null;
  /** No new turn after this many seconds. */
  maxSeconds: number;
  keep: boolean;
}

/** One replica's share of a run. */
export interface ReplicaShare {
  replica: string;
  pid: number;
  /** Turns it answered (requests the driver sent to it). */
  turns: number;
  /** Its CPU over the run divided by the turns it answered. */
  cpu_ms_per_turn: CpuPerTurn;
  /** Its CPU over the run as a share of one core. */
  cpu_cores: number;
  event_loop_utilization: number;
  /** threadline_store_seconds per turn it answered, total. */
  store_ms_per_turn: number;
}

/** What one run (N replicas, C conversations) measured. */
export interface ReplicasRun {
  replicas: number;
  conversations: number;
  spread: ReplicaSpread;
  turns: number;
  cut_short: boolean;
  seconds: number;
  turns_per_sec: number;
  errors: number;
  error_examples: string[];
  /**
   * Turns run by another replica than the one that took the request: the session's lease was
   * held there, so the message was queued and its reply relayed (polled every 100 ms).
   */
  turns_run_elsewhere: number;
  /** Driver: request written → last byte of the reply. */
  latency: Spread & { mean_ms: number };
  /** Inside the gateway that took the request: headers parsed → reply handed to the socket, minus the agent's time. */
  after_read: Spread;
  /** The agent's time (echo ~0; with a provider the model call). */
  agent_time: Spread;
  per_replica: ReplicaShare[];
  /** All replicas' CPU divided by all turns. */
  gateway_cpu_ms_per_turn: number;
  driver_cpu_ms_per_turn: number;
  provider_cpu_ms_per_turn: number | null;
  /** The PostgreSQL processes serving the replicas' connections (application_name tlbench_*). */
  pg_backend_cpu_ms_per_turn: number;
  /** PostgreSQL's walwriter, checkpointer, background writer, autovacuum (the whole server's, other users included). */
  pg_background_cpu_ms_per_turn: number;
  /** CPU of every process above as a share of one core (the machine has `cpus`). */
  cores_busy: { gateways: number; pg_backends: number; pg_background: number; driver: number; provider: number | null };
  /** pg_stat_database (this database; other users' transactions included) per turn. */
  pg_commits_per_turn: number;
  pg_rollbacks_per_turn: number;
  pg_deadlocks: number;
  /** pg_stat_wal per turn (the whole server): WAL flushes (fsyncs) and records. */
  pg_wal_syncs_per_turn: number;
  pg_wal_records_per_turn: number;
  pg_wal_kb_per_turn: number;
  /** Rows written per turn in each table of the run's schema (pg_stat_user_tables: inserted / updated (HOT) / deleted). */
  table_rows_per_turn: Record<string, { ins: number; upd: number; hot: number; del: number }>;
  /**
   * The replicas' backends, sampled every WAIT_SAMPLE_MS ms: the mean number active, and per
   * wait event (`CPU` = active, no wait) the mean number of backends in it.
   */
  pg_waits: { samples: number; active_mean: number; by_event: Record<string, number> };
}

export interface ReplicasReport {
  runs: ReplicasRun[];
  /** turns/s with the most replicas ÷ with the fewest, per C (`c100: 1.7`). */
  scaling: Record<string, number>;
}

// --- PostgreSQL side -----------------------------------------------------------------------

interface PgCounters {
  commits: number;
  rollbacks: number;
  deadlocks: number;
  walSyncs: number;
  walRecords: number;
  walBytes: number;
  tables: Map<string, { ins: number; upd: number; hot: number; del: number }>;
}

/** CPU by PostgreSQL pid: the replicas' backends and the server's background processes. */
interface PgCpu {
  backends: Map<number, number>;
  background: Map<number, number>;
}

const cpuMs = (pid: number): number | null => {
  try {
    const t = readCpuTimes(pid);
    return t.userMs + t.systemMs;
  } catch {
    return null; // gone, or not readable
  }
};

/**
 * The server's counters. A backend reports its counts to the statistics system at most once a
 * second, and an idle one only after 10 s or when it exits: read them after the replicas have
 * stopped (their shutdown's few writes then count too).
 */
async function pgCounters(client: pg.Client, schema: string): Promise<PgCounters> {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const db = (
    await client.query<{ c: string; r: string; d: string }>(
      "SELECT xact_commit AS c, xact_rollback AS r, deadlocks AS d FROM pg_stat_database WHERE datname = current_database()",
    )
  ).rows[0]!;
  const wal = (await client.query<{ s: string; r: string; b: string }>("SELECT wal_sync AS s, wal_records AS r, wal_bytes AS b FROM pg_stat_wal")).rows[0]!;
  const tables = new Map<string, { ins: number; upd: number; hot: number; del: number }>();
  for (const row of (
    await client.query<{ t: string; i: string; u: string; h: string; d: string }>(
      "SELECT relname AS t, n_tup_ins AS i, n_tup_upd AS u, n_tup_hot_upd AS h, n_tup_del AS d FROM pg_stat_user_tables WHERE schemaname = $1",
      [schema],
    )
  ).rows) {
    tables.set(row.t, { ins: Number(row.i), upd: Number(row.u), hot: Number(row.h), del: Number(row.d) });
  }
  return {
    commits: Number(db.c),
    rollbacks: Number(db.r),
    deadlocks: Number(db.d),
    walSyncs: Number(wal.s),
    walRecords: Number(wal.r),
    walBytes: Number(wal.b),
    tables,
  };
}

async function pgCpu(client: pg.Client): Promise<PgCpu> {
  const procs = (
    await client.query<{ pid: number; ours: boolean }>(
      `SELECT pid, application_name LIKE '${APP_PREFIX}%' AS ours FROM pg_stat_activity WHERE application_name LIKE '${APP_PREFIX}%' OR backend_type <> 'client backend'`,
    )
  ).rows;
  const backends = new Map<number, number>();
  const background = new Map<number, number>();
  for (const p of procs) {
    const ms = cpuMs(p.pid);
    if (ms !== null) (p.ours ? backends : background).set(p.pid, ms);
  }
  return { backends, background };
}

/** CPU used between two snapshots by the pids of `after` (a pid new since `before` counts whole). */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Samples the replicas' backends' wait events until stopped. */
function startWaitSampler(client: pg.Client): { stop(): Promise<ReplicasRun["pg_waits"]> } {
  const counts = new Map<string, number>();
  let samples = 0;
  let active = 0;
  let busy: Promise<void> = Promise.resolve();
  let inFlight = false;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = true;
    busy = (async () => {
      try {
        const rows = (
          await client.query<{ e: string; n: string }>(
            `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS e, count(*) AS n FROM pg_stat_activity
            WHERE application_name LIKE '${APP_PREFIX}%' AND state = 'active' GROUP BY 1`,
          )
        ).rows;
        samples++;
        for (const r of rows) {
          counts.set(r.e, (counts.get(r.e) ?? 0) + Number(r.n));
          active += Number(r.n);
        }
      } catch (error) {
        log(`wait sampler: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        inFlight = false;
      }
    })();
  }, WAIT_SAMPLE_MS);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      const byEvent = Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([e, n]) => [e, round3(n / Math.max(1, samples))]));
      return { samples, active_mean: round3(active / Math.max(1, samples)), by_event: byEvent };
    },
  };
}

// --- the run -------------------------------------------------------------------------------

/** The base URL without a schema parameter, and the schema prefix (the parameter's value, or `bench_gw`). */
function splitTarget(db: string): { base: string; prefix: string } {
  const url = new URL(db);
  const given = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  return { base: url.toString(), prefix: given ?? "bench_gw" };
}

function withParams(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

const totalMs = (t: CpuTimes): number => t.userMs + t.systemMs;

async function oneRun(
  driver: DriverHandle,
  admin: pg.Client,
  options: ReplicasOptions,
  n: number,
  c: number,
  base: string,
  schema: string,
): Promise<ReplicasRun> {
  let provider: ProviderChild | null = null;
  const gws: GatewayChild[] = [];
  try {
    if (options.modelDelayMs !== null) {
      provider = await startProviderChild({ firstTokenMs: options.modelDelayMs, tokenGapMs: 0, words: 1, reply: "echo", keepAliveMs: 120_000 });
    }
    const agentConfig = provider === null ? "" : "titles:\n  enabled: false\nprovider:\n  tools: off\n";
    const env: Record<string, string> =
      provider === null ? {} : { OPENAI_BASE_URL: provider.url, OPENAI_API_KEY: "bench-key", THREADLINE_MODEL: "bench-model" };
    // One after the other: the first one creates and migrates the schema.
    for (let i = 1; i <= n; i++) {
      const gw = await startGatewayChild(`r${i}of${n}`, [], "FULL", {
        env,
        config: `gateway:\n  replicaId: r${i}\n${agentConfig}`,
        db: withParams(base, { schema, application_name: `${APP_PREFIX}r${i}` }),
      });
      gws.push(gw);
      if (gw.agent !== (provider === null ? "echo" : "provider")) throw new Error(`replica r${i} announced the agent "${gw.agent}"`);
    }
    const urls = gws.map((g) => g.url);
    // Warm-up: one conversation per replica (pools, prepared statements, JIT), not timed.
    const warm = await driver.run({ kind: "conversations", url: urls[0]!, urls, spread: "sticky", concurrency: n, turns: 5, tag: "warmup" });
    if (warm.kind === "conversations" && warm.errors > 0) log(`warm-up: ${warm.errors} errors, e.g. ${warm.errorExamples[0]}`);

    const m0 = await Promise.all(gws.map(async (g) => parseMetrics(await g.metrics())));
    await Promise.all(gws.map((g) => g.probe({ cmd: "record", on: true })));
    // The replicas' backends have flushed the warm-up's counts once idle for a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const pg0 = await pgCounters(admin, schema);
    const pgCpu0 = await pgCpu(admin);
    const cpu0 = gws.map((g) => readCpuTimes(g.pid));
    const d0 = readCpuTimes(driver.pid);
    const p0 = provider === null ? null : readCpuTimes(provider.pid);
    const waits = startWaitSampler(admin);
    const tag = `n${n}c${c}`;
    let result: Awaited<ReturnType<typeof driver.run>>;
    let pgWaits: ReplicasRun["pg_waits"];
    try {
      result = await driver.run({
        kind: "conversations",
        url: urls[0]!,
        urls,
        spread: options.spread,
        concurrency: c,
        turns: options.turns,
        tag,
        deadlineMs: options.maxSeconds * 1000,
      });
    } finally {
      pgWaits = await waits.stop();
    }
    if (result.kind !== "conversations") throw new Error("driver answered the wrong job");
    const cpu1 = gws.map((g) => readCpuTimes(g.pid));
    const d1 = readCpuTimes(driver.pid);
    const p1 = provider === null ? null : readCpuTimes(provider.pid);
    const pgCpu1 = await pgCpu(admin);
    const collected = await Promise.all(gws.map((g) => g.probe({ cmd: "collect" })));
    const m1 = await Promise.all(gws.map(async (g) => parseMetrics(await g.metrics())));
    // Stopped replicas' backends exit, which reports their last counts.
    await stopAll(gws);
    const pg1 = await pgCounters(admin, schema);

    const turns = result.attempted;
    const seconds = result.seconds;
    // Which replica got which turn: the probe of the one that parsed its request saw its id.
    const seen = new Map<string, ProbeSample>();
    const turnsOf = gws.map(() => 0);
    collected.forEach((col, i) => {
      for (const s of col.samples) {
        // No start: the turn ran here for a request another replica took (IPC sends NaN as null).
        if (!Number.isFinite(s.startMs)) continue;
        seen.set(s.id, s);
        turnsOf[i]! += 1;
      }
    });
    // With round-robin a turn may run on the lease holder, not the replica that took the request:
    // the agent's time is on the replica that ran it.
    const agentMsOf = new Map<string, number>();
    const ranOn = new Map<string, number>();
    collected.forEach((col, i) => {
      for (const s of col.samples) {
        if (s.agentMs === null) continue;
        agentMsOf.set(s.id, s.agentMs);
        ranOn.set(s.id, i);
      }
    });
    const takenBy = new Map<string, number>();
    collected.forEach((col, i) => {
      for (const s of col.samples) if (Number.isFinite(s.startMs)) takenBy.set(s.id, i);
    });
    let ranElsewhere = 0;
    for (const [id, i] of ranOn) if (takenBy.has(id) && takenBy.get(id) !== i) ranElsewhere++;
    const afterRead: number[] = [];
    const agentTime: number[] = [];
    for (const s of result.samples) {
      const g = seen.get(s.id);
      const agentMs = agentMsOf.get(s.id);
      if (!s.ok || g === undefined || g.endMs === null || agentMs === undefined) continue;
      agentTime.push(agentMs);
      afterRead.push(g.endMs - g.startMs - agentMs);
    }
    const perReplica: ReplicaShare[] = gws.map((g, i) => {
      const t = Math.max(1, turnsOf[i]!);
      const user = cpu1[i]!.userMs - cpu0[i]!.userMs;
      const system = cpu1[i]!.systemMs - cpu0[i]!.systemMs;
      let store = 0;
      for (const [op, s] of Object.entries(m1[i]!.storeSeconds)) store += (s - (m0[i]!.storeSeconds[op] ?? 0)) * 1000;
      return {
        replica: `r${i + 1}`,
        pid: g.pid,
        turns: turnsOf[i]!,
        cpu_ms_per_turn: { user: round3(user / t), system: round3(system / t), total: round3((user + system) / t) },
        cpu_cores: round3((user + system) / 1000 / seconds),
        event_loop_utilization: round3(collected[i]!.eventLoopUtilization),
        store_ms_per_turn: round3(store / t),
      };
    });
    const gwCpu = gws.reduce((sum, _, i) => sum + totalMs(cpu1[i]!) - totalMs(cpu0[i]!), 0);
    const backendCpu = cpuDelta(pgCpu0.backends, pgCpu1.backends);
    const backgroundCpu = cpuDelta(pgCpu0.background, pgCpu1.background);
    const driverCpu = totalMs(d1) - totalMs(d0);
    const providerCpu = p0 === null || p1 === null ? null : totalMs(p1) - totalMs(p0);
    const per = (x: number): number => round3(x / Math.max(1, turns));
    const cores = (ms: number): number => round3(ms / 1000 / seconds);
    const tables: ReplicasRun["table_rows_per_turn"] = {};
    for (const [name, after] of [...pg1.tables].sort((a, b) => a[0].localeCompare(b[0]))) {
      const before = pg0.tables.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
      const d = { ins: per(after.ins - before.ins), upd: per(after.upd - before.upd), hot: per(after.hot - before.hot), del: per(after.del - before.del) };
      if (d.ins + d.upd + d.del > 0) tables[name] = d;
    }
    const client = result.samples.map((s) => s.clientMs);
    return {
      replicas: n,
      conversations: c,
      spread: options.spread,
      turns,
      cut_short: result.cutShort,
      seconds: round3(seconds),
      turns_per_sec: round1(turns / seconds),
      errors: result.errors,
      error_examples: result.errorExamples,
      turns_run_elsewhere: ranElsewhere,
      latency: { ...spread(client), mean_ms: round3(mean(client)) },
      after_read: spread(afterRead),
      agent_time: spread(agentTime),
      per_replica: perReplica,
      gateway_cpu_ms_per_turn: per(gwCpu),
      driver_cpu_ms_per_turn: per(driverCpu),
      provider_cpu_ms_per_turn: providerCpu === null ? null : per(providerCpu),
      pg_backend_cpu_ms_per_turn: per(backendCpu),
      pg_background_cpu_ms_per_turn: per(backgroundCpu),
      cores_busy: {
        gateways: cores(gwCpu),
        pg_backends: cores(backendCpu),
        pg_background: cores(backgroundCpu),
        driver: cores(driverCpu),
        provider: providerCpu === null ? null : cores(providerCpu),
      },
      pg_commits_per_turn: per(pg1.commits - pg0.commits),
      pg_rollbacks_per_turn: per(pg1.rollbacks - pg0.rollbacks),
      pg_deadlocks: pg1.deadlocks - pg0.deadlocks,
      pg_wal_syncs_per_turn: per(pg1.walSyncs - pg0.walSyncs),
      pg_wal_records_per_turn: per(pg1.walRecords - pg0.walRecords),
      pg_wal_kb_per_turn: per((pg1.walBytes - pg0.walBytes) / 1024),
      table_rows_per_turn: tables,
      pg_waits: pgWaits,
    };
  } finally {
    await stopAll(gws);
    for (const g of gws) await g.cleanUp();
    await provider?.stop();
  }
}

/** SIGTERM to every replica at once, then waits for them (a second call finds them stopped). */
async function stopAll(gws: readonly GatewayChild[]): Promise<void> {
  const codes = await Promise.all(gws.map((g) => g.stop()));
  codes.forEach((code, i) => {
    if (code !== 0) log(`warning: replica r${i + 1} (pid ${gws[i]!.pid}) exited with ${code} after SIGTERM`);
  });
}

/** Every run: for each C, for each N (in the order given). */
export async function runReplicas(driver: DriverHandle, options: ReplicasOptions): Promise<ReplicasReport> {
  const { base, prefix } = splitTarget(options.db);
  const admin = new pg.Client({ connectionString: withDefaultUser(base), application_name: "tlbench_admin" });
  await admin.connect();
  const runs: ReplicasRun[] = [];
  const tag = randomBytes(3).toString("hex");
  try {
    for (const c of options.conversations) {
      for (const n of options.replicas) {
        const schema = `${prefix}_${tag}_n${n}_c${c}`.slice(0, 63);
        log(
          `replicas: N = ${n} on schema ${schema}, C = ${c} × ${options.turns} turns (${options.spread}${options.modelDelayMs === null ? ", echo agent" : `, model delay ${options.modelDelayMs} ms`})`,
        );
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        try {
          const r = await oneRun(driver, admin, options, n, c, base, schema);
          log(
            `  ${r.turns_per_sec} turns/s; latency p50 ${r.latency.p50_ms} / p99 ${r.latency.p99_ms} ms; errors ${r.errors}; ` +
              `CPU ms/turn: gateways ${r.gateway_cpu_ms_per_turn}, PG backends ${r.pg_backend_cpu_ms_per_turn}, PG background ${r.pg_background_cpu_ms_per_turn}, driver ${r.driver_cpu_ms_per_turn}`,
          );
          if (r.errors > 0) log(`  e.g. ${r.error_examples.join("; ")}`);
          runs.push(r);
        } finally {
          if (options.keep) log(`kept schema ${schema}`);
          else await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        }
      }
    }
  } finally {
    await admin.end();
  }
  const scaling: Record<string, number> = {};
  for (const c of options.conversations) {
    const at = runs.filter((r) => r.conversations === c).sort((a, b) => a.replicas - b.replicas);
    if (at.length >= 2) scaling[`c${c}`] = round3(at[at.length - 1]!.turns_per_sec / at[0]!.turns_per_sec);
  }
  return { runs, scaling };
}

/** The stderr table. */
export function formatReplicas(report: ReplicasReport, cpus: number): string {
  const lines: string[] = [];
  for (const r of report.runs) {
    const shares = r.per_replica
      .map(
        (p) => `${p.replica} ${p.turns} turns ${p.cpu_ms_per_turn.total} ms/turn (${p.cpu_cores} core, loop ${Math.round(p.event_loop_utilization * 100)} %)`,
      )
      .join("; ");
    const cb = r.cores_busy;
    const waits = Object.entries(r.pg_waits.by_event)
      .slice(0, 6)
      .map(([e, v]) => `${e} ${v}`)
      .join(", ");
    lines.push(
      `N = ${r.replicas}, C = ${r.conversations} (${r.spread}): ${r.turns} turns in ${r.seconds} s = ${r.turns_per_sec} turns/s; latency p50 / p99 ${r.latency.p50_ms} / ${r.latency.p99_ms} ms (after read ${r.after_read.p50_ms} / ${r.after_read.p99_ms}); errors ${r.errors}; run by another replica than the one asked ${r.turns_run_elsewhere}\n` +
        `  per replica: ${shares}\n` +
        `  CPU ms/turn: gateways ${r.gateway_cpu_ms_per_turn}, PG backends ${r.pg_backend_cpu_ms_per_turn}, PG background ${r.pg_background_cpu_ms_per_turn}, driver ${r.driver_cpu_ms_per_turn}${r.provider_cpu_ms_per_turn === null ? "" : `, provider ${r.provider_cpu_ms_per_turn}`}\n` +
        `  cores busy (of ${cpus}): gateways ${cb.gateways}, PG ${round3(cb.pg_backends + cb.pg_background)}, driver ${cb.driver}${cb.provider === null ? "" : `, provider ${cb.provider}`} = ${round3(cb.gateways + cb.pg_backends + cb.pg_background + cb.driver + (cb.provider ?? 0))}\n` +
        `  PG per turn: ${r.pg_commits_per_turn} commits, ${r.pg_rollbacks_per_turn} rollbacks, ${r.pg_wal_syncs_per_turn} WAL flushes, ${r.pg_wal_records_per_turn} WAL records (${r.pg_wal_kb_per_turn} kB); deadlocks ${r.pg_deadlocks}\n` +
        `  PG backends active (mean ${r.pg_waits.active_mean} of ${r.pg_waits.samples} samples): ${waits}\n` +
        `  rows per turn: ${Object.entries(r.table_rows_per_turn)
          .map(([t, d]) => `${t} +${d.ins}/~${d.upd}${d.hot > 0 ? `(hot ${d.hot})` : ""}/-${d.del}`)
          .join(", ")}`,
    );
  }
  for (const [c, ratio] of Object.entries(report.scaling)) lines.push(`scaling at ${c}: ${ratio}× (most replicas ÷ fewest)`);
  return lines.join("\n");
}
