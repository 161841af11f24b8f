/**
 * The storage backends the gateway tests run on: a SQLite file in a temp dir and an
 * empty PostgreSQL schema (created and migrated once, then emptied and reused by the next
 * test of the file: see {@link SchemaResetter}). `reopen()` opens another handle on the same data, as a
 * restarted process would.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { openSessionDB } from "../../src/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { StoreClosedError } from "../../src/store/errors.js";
import { dropSchema, requirePostgres, SchemaResetter, TEST_PG_URL } from "../contract/postgres-server.js";

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
    const selected = process.env["THREADLINE_STORES"]
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (selected && selected.length > 0 && !selected.includes(name)) {
      // Recorded as skipped, as test/contract/ does, so a narrowed run says what it left out.
      describe(name, () => {
        it.skip(`not selected by THREADLINE_STORES=${process.env["THREADLINE_STORES"]}`, () => {});
      });
      continue;
    }
    describe(name, () => {
      const cleanups: Array<() => Promise<void>> = [];
      /** Migrated schemas of finished tests, emptied before the next test takes one. */
      const free: string[] = [];
      const created: string[] = [];
      const resetter = new SchemaResetter();
      if (name === "postgres") {
        beforeAll(requirePostgres);
        afterAll(async () => {
          await resetter.close();
          for (const schema of created.splice(0)) await dropSchema(schema);
        });
      }
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
            let schema = free.pop();
            if (schema === undefined) {
              schema = `tl_gw_${randomBytes(6).toString("hex")}`;
              created.push(schema);
            } else {
              await resetter.reset(schema);
            }
            const taken = schema;
            target = { url: TEST_PG_URL, schema: taken };
            cleanups.push(async () => {
              for (const h of handles) await closeQuietly(h);
              free.push(taken);
            });
          }
          const open = async (): Promise<SessionDB> => {
            const db = target.schema === undefined ? await openSessionDB(target.url) : await openSessionDB(target.url, { schema: target.schema, poolSize: 4 });
            handles.push(db);
            return db;
          };
          return { db: await open(), target, reopen: open };
        },
      });
    });
  }
}
