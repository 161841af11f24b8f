/**
 * The gateway of the context benchmark: `startGateway` (what `threadline serve` runs) in this
 * process, from the sources, configured like a user would (`parseServeConfig` on a config
 * document): the api-server adapter on 127.0.0.1, the fake model as its OpenAI-compatible
 * provider, a SQLite file in a temp dir (or a fresh PostgreSQL schema), everything else default.
 *
 * The provider's window is set with `provider.contextWindow` when this build knows the key; a
 * build without it (before issue 28) runs without, and the report says so.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { startGateway, parseServeConfig, type RunningGateway } from "../../src/serve/index.js";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** What the gateway logged, counted (the report shows it: a build's warnings and its context lines). */
export class LogTally {
  readonly counts = new Map<string, number>();
  /** Warnings and errors, the first few of each message. */
  readonly samples: string[] = [];
  /** Info lines about the context window, budget or compression (startup lines of issue 28). */
  readonly context: string[] = [];

  write(line: string): void {
    let entry: { level?: number; msg?: string; [key: string]: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    const level = entry.level ?? 0;
    const name = level >= 50 ? "error" : level >= 40 ? "warn" : "info";
    const key = `${name}: ${entry.msg ?? ""}`.slice(0, 200);
    if (this.counts.size < 200 || this.counts.has(key)) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (level >= 40 && this.counts.get(key) === 1 && this.samples.length < 20) this.samples.push(line.trim().slice(0, 600));
    if (level < 40 && /context|window|budget|compress|summar/iu.test(entry.msg ?? "") && this.context.length < 20) this.context.push(line.trim().slice(0, 600));
  }
}

/** Options of {@link startBenchGateway}. */
export interface BenchGatewayOptions {
  providerUrl: string;
  model: string;
  window: number;
  /** A postgres:// URL (a fresh schema is made in it), or null for a SQLite file. */
  postgres: string | null;
  keep: boolean;
}

/** A started gateway and how to take it down. */
export interface BenchGateway {
  gateway: RunningGateway;
  /** Where the data is: the SQLite file, or the schema. */
  database: string;
  /** `provider.contextWindow` when this build takes it, else a note. */
  windowSetting: string;
  config: Record<string, unknown>;
  log: LogTally;
  stop(): Promise<void>;
}

export async function startBenchGateway(options: BenchGatewayOptions): Promise<BenchGateway> {
  const home = await mkdtemp(join(tmpdir(), "threadline-bench-context-"));
  const schema = `bench_context_${process.pid}`;
  let target = join(home, "state.db");
  if (options.postgres !== null) {
    const url = new URL(options.postgres);
    url.searchParams.set("schema", schema);
    target = url.toString();
  }
  const env: NodeJS.ProcessEnv = { THREADLINE_HOME: home, PATH: process.env["PATH"] ?? "" };
  const provider = { baseUrl: options.providerUrl, apiKey: "bench-key", model: options.model };
  const doc: Record<string, unknown> = { gateway: { host: "127.0.0.1", port: 0 }, provider: { ...provider, contextWindow: options.window } };
  let windowSetting = `provider.contextWindow: ${options.window}`;
  let config: ReturnType<typeof parseServeConfig>;
  try {
    config = parseServeConfig(doc, { env });
  } catch (error) {
    if (!/contextWindow/u.test(String((error as Error).message))) throw error;
    // A build before issue 28: no window setting (the window is only the fake model's).
    doc["provider"] = provider;
    config = parseServeConfig(doc, { env });
    windowSetting = "not set: this build has no provider.contextWindow";
  }
  const log = new LogTally();
  const logger = pino({ level: "info" }, { write: (line: string) => log.write(line) });
  const gateway = await startGateway({ config, logger, env, database: target });
  const where = options.postgres === null ? target : `${new URL(options.postgres).host}${new URL(options.postgres).pathname}, schema ${schema}`;
  return {
    gateway,
    database: where,
    windowSetting,
    config: { ...doc, provider: { ...(doc["provider"] as object), apiKey: "(bench)" } },
    log,
    async stop(): Promise<void> {
      await gateway.stop();
      if (options.keep) {
        process.stderr.write(`[bench:context] kept ${where} (home ${home})\n`);
        return;
      }
      await rm(home, { recursive: true, force: true });
      if (options.postgres !== null) {
        const require = createRequire(join(PROJECT_ROOT, "package.json"));
        const pg = require("pg") as typeof import("pg");
        const admin = new pg.Client({ connectionString: withDefaultUser(options.postgres) });
        await admin.connect();
        try {
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await admin.end();
        }
      }
    },
  };
}
