/**
 * A scratch folder of raw better-sqlite3 databases in WAL mode, for the tests of the WAL's
 * flushing and checkpointing (wal-sync.test.ts, checkpointer.test.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

export interface WalDatabases {
  /** The folder (for other files of the test). */
  readonly dir: string;
  /** A new database `name` in WAL mode with one committed write (table `t (x)`), so its -wal file exists. */
  open(name: string): { path: string; db: Database.Database };
  /** Removes the folder. */
  remove(): void;
}

export function walDatabases(prefix: string): WalDatabases {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    open(name) {
      const path = join(dir, name);
      const db = new Database(path);
      db.pragma("journal_mode = WAL");
      db.exec("CREATE TABLE t (x)");
      return { path, db };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
