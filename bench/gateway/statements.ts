/**
 * `bench:gateway -- --statements`: how many SQLite statements (reads and writes) and
 * transactions one gateway turn costs, and which steps issue them.
 *
 * A bench-only harness, in this process: better-sqlite3's Statement `run/get/all/iterate`
 * and Database `exec` are wrapped (prototype patches, before the gateway opens its file), so
 * the product runs unchanged. A real gateway (`startGateway` from dist/, default config,
 * built-in echo agent, api-server on 127.0.0.1:0, SQLite file in a temp dir) is started in
 * this process and sent `turns` messages in one session over loopback HTTP, one at a time;
 * each turn's window runs from just before the request to the moment the gateway is idle
 * again (no running turn and no statement for {@link QUIET_MS} ms), so work done after the
 * reply (a title) counts too.
 *
 * Each statement is labelled with its SQL verb and table, and with the SessionDB and
 * SessionStore calls in progress when it ran (see CallTracker).
 * Statements run by SQLite triggers (the full-text index) are not separate calls and are
 * not counted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { log } from "../log.js";
import { PROJECT_ROOT } from "./gateway-child.js";

/** Idle this long (no running turn, no statement) ends a turn's window. */
const QUIET_MS = 150;

/** One executed statement. */
interface Executed {
  sql: string;
  method: string;
  /** The SessionDB call in progress (e.g. `startTurn`). */
  storeOp: string;
  /** The SessionStore call in progress (the gateway's session-entry layer), if any. */
  step: string;
}

/** One turn's statements. */
export interface TurnStatements {
  turn: number;
  statements: number;
  reads: number;
  writes: number;
  /** BEGIN … COMMIT pairs (explicit transactions). */
  transactions: number;
  /** Writes outside an explicit transaction (each its own implicit one). */
  autocommit_writes: number;
  /** Count by `VERB table`. */
  by_table: Record<string, number>;
  /** Count by SessionDB method. */
  by_store_op: Record<string, number>;
  /** Count by SessionStore method (`(none)`: the runner or the queue called the db directly). */
  by_step: Record<string, number>;
  /** Every statement in order (SQL shortened). */
  sequence: string[];
}

export interface StatementsReport {
  synchronous: "FULL" | "NORMAL";
  /** Set for PostgreSQL (the default is a SQLite file). */
  database?: string;
  agent: string;
  config: string;
  turns: TurnStatements[];
}

const shorten = (sql: string): string => sql.replace(/\s+/gu, " ").trim().slice(0, 140);

/** `VERB table` of a statement (BEGIN / COMMIT / PRAGMA alone). */
export function statementLabel(sql: string): { verb: string; table: string; write: boolean } {
  const text = sql.replace(/\s+/gu, " ").trim();
  const verb = (/^(?:WITH\b.*?\)\s*)?(\w+)/isu.exec(text)?.[1] ?? "?").toUpperCase();
  const table =
    /^(?:INSERT(?: OR \w+)? INTO|REPLACE INTO|UPDATE(?: OR \w+)?|DELETE FROM)\s+["`]?(\w+)/iu.exec(text)?.[1] ?? /\bFROM\s+["`]?(\w+)/iu.exec(text)?.[1] ?? "";
  const write = ["INSERT", "UPDATE", "DELETE", "REPLACE"].includes(verb) || (verb === "WITH" && /\b(INSERT|UPDATE|DELETE)\b/iu.test(text));
  return { verb, table, write };
}

/**
 * The SessionDB / SessionStore calls in progress. The SQLite dialect runs a call's statements
 * from a deferred callback, so their stacks do not reach the caller: instead every method of
 * the gateway's `db` and `store` objects is wrapped (on the instances, after the gateway
 * started), and a statement is labelled with the latest call still in progress.
 */
class CallTracker {
  readonly #active = new Map<string, Array<{ name: string }>>();

  /** Wraps every method of `target` (own and inherited) under `layer`. */
  wrap(layer: string, target: object): void {
    const stack: Array<{ name: string }> = [];
    this.#active.set(layer, stack);
    const names = new Set<string>();
    for (let proto: object | null = target; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === "constructor") continue;
        const d = Object.getOwnPropertyDescriptor(proto, name);
        if (d !== undefined && typeof d.value === "function") names.add(name);
      }
    }
    const record = target as Record<string, (...a: unknown[]) => unknown>;
    for (const name of names) {
      const original = record[name]!;
      record[name] = function (this: unknown, ...a: unknown[]) {
        const mark = { name };
        stack.push(mark);
        const done = (): void => {
          const at = stack.indexOf(mark);
          if (at >= 0) stack.splice(at, 1);
        };
        let result: unknown;
        try {
          result = original.apply(this, a);
        } catch (error) {
          done();
          throw error;
        }
        if (result instanceof Promise) result.then(done, done);
        else done();
        return result;
      };
    }
  }

  /** The latest call of `layer` still in progress. */
  current(layer: string): string {
    const stack = this.#active.get(layer);
    return stack === undefined || stack.length === 0 ? "(none)" : stack[stack.length - 1]!.name;
  }
}

/** Wraps better-sqlite3 so every statement executed while `on()` is true is recorded. */
function instrumentSqlite(calls: CallTracker): { on(value: boolean): void; take(): Executed[]; count(): number } {
  const require = createRequire(join(PROJECT_ROOT, "package.json"));
  type Db = { prepare(sql: string): object; exec(sql: string): unknown; close(): void };
  const Database = require("better-sqlite3") as { new (path: string): Db; prototype: Db };
  const scratch = new Database(":memory:");
  const Statement = scratch.prepare("SELECT 1").constructor as { prototype: Record<string, unknown> };
  scratch.close();
  let recording = false;
  let log: Executed[] = [];
  const record = (sql: string, method: string): void => {
    if (!recording) return;
    log.push({ sql, method, storeOp: calls.current("db"), step: calls.current("store") });
  };
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = Statement.prototype[method] as (...a: unknown[]) => unknown;
    Statement.prototype[method] = function (this: { source: string }, ...a: unknown[]) {
      record(this.source, method);
      return original.apply(this, a);
    };
  }
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Db, sql: string) {
    record(sql, "exec");
    return exec.call(this, sql);
  };
  return {
    on: (value) => (recording = value),
    take: () => {
      const out = log;
      log = [];
      return out;
    },
    count: () => log.length,
  };
}

const bump = (into: Record<string, number>, key: string): void => {
  into[key] = (into[key] ?? 0) + 1;
};

function summarise(turn: number, executed: readonly Executed[]): TurnStatements {
  const t: TurnStatements = {
    turn,
    statements: 0,
    reads: 0,
    writes: 0,
    transactions: 0,
    autocommit_writes: 0,
    by_table: {},
    by_store_op: {},
    by_step: {},
    sequence: [],
  };
  let inTx = false;
  for (const e of executed) {
    const { verb, table, write } = statementLabel(e.sql);
    t.statements++;
    if (verb === "BEGIN") {
      t.transactions++;
      inTx = true;
    } else if (verb === "COMMIT" || verb === "ROLLBACK" || verb === "END") inTx = false;
    else if (write) {
      t.writes++;
      if (!inTx) t.autocommit_writes++;
    } else t.reads++;
    bump(t.by_table, table === "" ? verb : `${verb} ${table}`);
    bump(t.by_store_op, e.storeOp);
    bump(t.by_step, e.step);
    t.sequence.push(`${e.step} › ${e.storeOp}: ${shorten(e.sql)}`);
  }
  return t;
}

/**
 * Wraps node-postgres's `Client.prototype.query` (the pool's clients use it) so every
 * statement sent while `on()` is true is recorded; the admin connections of this harness
 * are not made while recording.
 */
async function instrumentPostgres(calls: CallTracker): Promise<{ on(value: boolean): void; take(): Executed[]; count(): number }> {
  const require = createRequire(join(PROJECT_ROOT, "package.json"));
  const pg = require("pg") as { Client: { prototype: Record<string, unknown> } };
  let recording = false;
  let log: Executed[] = [];
  const original = pg.Client.prototype["query"] as (...a: unknown[]) => unknown;
  pg.Client.prototype["query"] = function (this: unknown, ...a: unknown[]) {
    const first = a[0];
    const sql = typeof first === "string" ? first : typeof (first as { text?: unknown } | null)?.text === "string" ? (first as { text: string }).text : "";
    if (recording && sql !== "") log.push({ sql, method: "query", storeOp: calls.current("db"), step: calls.current("store") });
    return original.apply(this, a);
  };
  return {
    on: (value) => (recording = value),
    take: () => {
      const out = log;
      log = [];
      return out;
    },
    count: () => log.length,
  };
}

/**
 * Runs the harness: a gateway in this process, `turns` messages into one session. With `db`
 * (a postgres:// URL) the gateway runs on a fresh schema there (dropped afterwards), with
 * leases on (`gateway.leases: auto`), as replicas do.
 */
export async function countTurnStatements(options: { turns: number; synchronous: "FULL" | "NORMAL"; db?: string | null }): Promise<StatementsReport> {
  const calls = new CallTracker();
  const postgres = options.db !== undefined && options.db !== null;
  const sqlite = postgres ? await instrumentPostgres(calls) : instrumentSqlite(calls);
  const schema = `bench_statements_${process.pid}`;
  let target: string | null = null;
  if (postgres) {
    const url = new URL(options.db!);
    url.searchParams.set("schema", schema);
    target = url.toString();
  }
  const dist = (path: string): string => pathToFileURL(join(PROJECT_ROOT, "dist", path)).href;
  const serve = (await import(dist("serve/index.js"))) as typeof import("../../src/serve/index.js");
  const { pino } = await import("pino");
  const home = await mkdtemp(join(tmpdir(), "threadline-bench-statements-"));
  const doc = { gateway: { host: "127.0.0.1", port: 0 }, storage: { synchronous: options.synchronous } };
  const env: NodeJS.ProcessEnv = { THREADLINE_HOME: home, PATH: process.env["PATH"] ?? "" };
  const gateway = await serve.startGateway({
    config: serve.parseServeConfig(doc, { env }),
    database: target ?? join(home, "state.db"),
    logger: pino({ level: "silent" }),
    env,
  });
  calls.wrap("db", gateway.db);
  calls.wrap("store", gateway.store);
  const turns: TurnStatements[] = [];
  try {
    for (let k = 1; k <= options.turns; k++) {
      sqlite.take();
      sqlite.on(true);
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-threadline-session-key": "bench-statements" },
        body: JSON.stringify({ model: "threadline", messages: [{ role: "user", content: `statement count, turn ${k}: please repeat this line` }] }),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`turn ${k}: HTTP ${response.status} ${text.slice(0, 200)}`);
      // Idle: no running turn and no new statement for QUIET_MS (work after the reply counts).
      let seen = -1;
      let quietSince = performance.now();
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        const n = sqlite.count();
        if (n !== seen || gateway.runner.activeTurns > 0) {
          seen = n;
          quietSince = performance.now();
        } else if (performance.now() - quietSince >= QUIET_MS) break;
      }
      sqlite.on(false);
      turns.push(summarise(k, sqlite.take()));
    }
  } finally {
    sqlite.on(false);
    await gateway.stop();
    await rm(home, { recursive: true, force: true });
    if (postgres) {
      const require = createRequire(join(PROJECT_ROOT, "package.json"));
      const pg = require("pg") as typeof import("pg");
      const { withDefaultUser } = await import("../../src/store/postgres/postgres-connection.js");
      const url = new URL(options.db!);
      url.searchParams.delete("schema");
      const admin = new pg.Client({ connectionString: withDefaultUser(url.toString()) });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
  log(`statements: ${turns.length} turns counted`);
  return {
    synchronous: options.synchronous,
    agent: "built-in echo (default config: heuristic titles on)",
    config: JSON.stringify(doc),
    ...(postgres ? { database: "PostgreSQL, a fresh schema (leases on: gateway.leases auto)" } : {}),
    turns,
  };
}

/** The report as text (stderr). */
export function formatStatements(report: StatementsReport): string {
  const lines: string[] = [];
  for (const t of report.turns) {
    lines.push(
      `turn ${t.turn}: ${t.statements} statements (${t.reads} reads, ${t.writes} writes, ${t.transactions} transactions, ${t.autocommit_writes} writes outside one)`,
    );
    const list = (title: string, counts: Record<string, number>): void => {
      lines.push(
        `  ${title}: ${Object.entries(counts)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}`,
      );
    };
    list("by table", t.by_table);
    list("by SessionDB call", t.by_store_op);
    list("by SessionStore call", t.by_step);
  }
  return lines.join("\n");
}
