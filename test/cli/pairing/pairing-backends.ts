/**
 * The two databases the `threadline pairing` tests run on: a temp SQLite file and a fresh
 * PostgreSQL schema (`postgres://…?schema=…`), each with a store handle for seeding and
 * checking through the public API, and the `--db` target the CLI is given.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { openSessionDB, type SessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import type { TempHome } from "../sessions/cli-harness.js";

/** A database for one test file: its `--db` target and a handle on it. */
export interface PairingBackend {
  name: "sqlite" | "postgres";
  /** What `--db` is given. */
  target: string;
  db: SessionDB;
  close(): Promise<void>;
}

/** The backends, by name, each opened on `t` (SQLite: `t.db`). */
export const PAIRING_BACKENDS: ReadonlyArray<{ name: "sqlite" | "postgres"; open(t: TempHome): Promise<PairingBackend> }> = [
  {
    name: "sqlite",
    async open(t) {
      const db = await openSessionDB(t.db);
      return { name: "sqlite", target: t.db, db, close: () => db.close() };
    },
  },
  {
    name: "postgres",
    async open() {
      await requirePostgres();
      const schema = `cli_pairing_${randomBytes(4).toString("hex")}`;
      const target = `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
      const db = await openSessionDB(target);
      return {
        name: "postgres",
        target,
        db,
        async close() {
          await db.close();
          await dropSchema(schema);
        },
      };
    },
  },
];
