/**
 * The storage backends the gateway tests run on: a SQLite file in a temp dir and a
 * fresh PostgreSQL schema. `reopen()` opens another handle on the same data, as a
 * restarted process would.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe } from "vitest";
import { openSessionDB } from "../../src/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { StoreClosedError } from "../../src/store/errors.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";

/** One test's database. */
export interface TestDatabase {
  /** The first handle. */
  db: SessionDB;
  /** Where it lives (a file path or a Postgres URL + schema). */
  target: { url: string; schema?: string };
  /** Another handle on the same data (closed after the test). */
  reopen(): Promise<SessionDB>;
}

/** A backend the gateway tests run on. */
export interface GatewayBackend {
  name: "sqlite" | "postgres";
  /** A fresh, empty database, destroyed after the test. */
  fresh(): Promise<TestDatabase>;
}

async function closeQuietly(db: SessionDB): Promise<void> {
  await db.close().catch((e: unknown) => {
    if (!(e instanceof StoreClosedError)) throw e;
  });
}

/** Runs `body` once per backend, each in its own `describe`, cleaning up after every test. */
export function forEachBackend(body: (backend: GatewayBackend) => void): void {
  for (const name of ["sqlite", "postgres"] as const) {
    const selected = process.env["THREADLINE_STORES"]?.split(",").map((s) => s.trim()).filter(Boolean);
    if (selected && selected.length > 0 && !selected.includes(name)) continue;
    describe(name, () => {
      const cleanups: Array<() => Promise<void>> = [];
      if (name === "postgres") beforeAll(requirePostgres);
      afterEach(async () => {
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      });
      body({
        name,
        async fresh() {
          const handles: SessionDB[] = [];
          let target: TestDatabase["target"];
          if (name === "sqlite") {
            const dir = mkdtempSync(join(tmpdir(), "tl-gw-"));
            target = { url: join(dir, "state.db") };
            cleanups.push(async () => {
              for (const h of handles) await closeQuietly(h);
              rmSync(dir, { recursive: true, force: true });
            });
          } else {
            const schema = `tl_gw_${randomBytes(6).toString("hex")}`;
            target = { url: TEST_PG_URL, schema };
            cleanups.push(async () => {
              for (const h of handles) await closeQuietly(h);
              await dropSchema(schema);
            });
          }
          const open = async (): Promise<SessionDB> => {
            const db =
              target.schema === undefined
                ? await openSessionDB(target.url)
                : await openSessionDB(target.url, { schema: target.schema, poolSize: 4 });
            handles.push(db);
            return db;
          };
          return { db: await open(), target, reopen: open };
        },
      });
    });
  }
}
