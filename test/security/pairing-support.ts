/**
 * What the pairing security tests share: the backends a gateway runs on (a temp SQLite home,
 * or a fresh PostgreSQL schema), opening the gateway's database from the test, and approving a
 * pairing code the way the owner does (`threadline pairing approve`, the real CLI).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";
import { BIN, databaseOf } from "../serve/gateway-process.js";

/** The backends (`THREADLINE_STORES` narrows them). */
export const BACKENDS = (["sqlite", "postgres"] as const).filter((name) => {
  const selected = process.env["THREADLINE_STORES"]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !selected || selected.length === 0 || selected.includes(name);
});
export type Backend = (typeof BACKENDS)[number];

const schemas: string[] = [];

/** The `database:` key of a gateway config for the backend (`{}` for the home's SQLite file). */
export async function databaseKey(backend: Backend): Promise<{ config: Record<string, unknown>; schema: string | null }> {
  if (backend === "sqlite") return { config: {}, schema: null };
  await requirePostgres();
  const schema = `tl_sec_${randomBytes(5).toString("hex")}`;
  schemas.push(schema);
  return { config: { database: `${TEST_PG_URL}?schema=${schema}` }, schema };
}

/** Opens the database a gateway of `home` uses, runs `use`, closes it. */
export async function withGatewayDb<T>(home: string, schema: string | null, use: (db: SessionDB) => Promise<T>): Promise<T> {
  const db = schema === null ? await openSessionDB(databaseOf(home)) : await openSessionDB(TEST_PG_URL, { schema, poolSize: 2 });
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** Drops the PostgreSQL schemas made by {@link databaseKey} (call in `afterEach`). */
export async function dropSchemas(): Promise<void> {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
}

/** Runs the built CLI with the home's config and database; resolves with its exit code and output. */
export function runCli(home: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
    for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG"]) delete env[name];
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Approves a pairing code as the owner does: `threadline pairing approve <platform> <code>`
 * (the built CLI, on the gateway's database). Throws when it does not exit 0.
 */
export async function approveAsOwner(home: string, schema: string | null, platform: string, code: string): Promise<void> {
  // The store commands take the database from --db (or THREADLINE_DB), not from the config file.
  const db = schema === null ? [] : ["--db", `${TEST_PG_URL}?schema=${schema}`];
  const approved = await runCli(home, ["pairing", "approve", platform, code, ...db]);
  if (approved.code !== 0) throw new Error(`threadline pairing approve exited ${approved.code}: ${approved.stderr}`);
}
