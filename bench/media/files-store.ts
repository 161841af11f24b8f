/**
 * The SQLite alternative issue 30 asks to measure: blobs as files under a folder
 * (`<folder>/<sha256>`), with only the hash, type and size in a table. Written as durably as
 * the store writes a blob (`synchronous` FULL): the file is written to a temporary name,
 * fsynced, renamed into place and the folder fsynced, then the row is committed. A standalone
 * comparison, not a store: no references, no sweep.
 *
 * @module
 */
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";

/** A folder of blobs named by SHA-256 and a SQLite table of their hashes. */
export class FilesMediaStore {
  readonly #db: Database.Database;
  readonly #folder: string;
  readonly #insert: Database.Statement;
  readonly #exists: Database.Statement;
  readonly #get: Database.Statement;

  constructor(dbPath: string, folder: string) {
    mkdirSync(folder, { recursive: true });
    this.#folder = folder;
    this.#db = new Database(dbPath);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = FULL");
    this.#db.exec("CREATE TABLE IF NOT EXISTS media (sha256 TEXT PRIMARY KEY, mime_type TEXT NOT NULL, size INTEGER NOT NULL, created_at REAL NOT NULL)");
    this.#insert = this.#db.prepare("INSERT OR IGNORE INTO media (sha256, mime_type, size, created_at) VALUES (?, ?, ?, ?)");
    this.#exists = this.#db.prepare("SELECT 1 FROM media WHERE sha256 = ?");
    this.#get = this.#db.prepare("SELECT mime_type FROM media WHERE sha256 = ?");
  }

  /** Stores a blob (de-duplicated by hash); resolves once the file and the row are durable. */
  put(bytes: Uint8Array, mimeType: string): string {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (this.#exists.get(sha256) !== undefined) return sha256;
    const path = join(this.#folder, sha256);
    const part = `${path}.part`;
    const fd = openSync(part, "w");
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(part, path);
    const dir = openSync(this.#folder, "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.#insert.run(sha256, mimeType, bytes.length, Date.now() / 1000);
    return sha256;
  }

  /** A blob's bytes, or `null`. */
  read(sha256: string): Buffer | null {
    if (this.#get.get(sha256) === undefined) return null;
    return readFileSync(join(this.#folder, sha256));
  }

  /** Bytes on disk: the allocated blocks of every file, plus the database file and its WAL. */
  diskBytes(dbPath: string): { files: number; database: number } {
    let files = 0;
    for (const name of readdirSync(this.#folder)) files += statSync(join(this.#folder, name)).blocks * 512;
    const size = (p: string): number => {
      try {
        return statSync(p).size;
      } catch {
        return 0;
      }
    };
    return { files, database: size(dbPath) + size(`${dbPath}-wal`) };
  }

  close(): void {
    this.#db.close();
  }
}
