import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { SessionDB } from "../src/index.js";
import { log } from "./log.js";

/** The database the run uses: a SQLite file or a server URL. */
export type Target = { kind: "file"; path: string; isDefault: boolean } | { kind: "url"; url: string };

/** `--db` as given, or a fresh `bench.db` in the dataset directory. */
export function resolveTarget(db: string | undefined, dataDir: string): Target {
  if (db === undefined) return { kind: "file", path: join(dataDir, "bench.db"), isDefault: true };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db)) return { kind: "url", url: db };
  return { kind: "file", path: resolve(db), isDefault: false };
}

/** What to pass to openSessionDB. */
export function targetSpec(target: Target): string {
  return target.kind === "file" ? target.path : target.url;
}

/** Removes a SQLite database file and its -wal / -shm companions. */
export async function removeDbFiles(path: string): Promise<void> {
  await Promise.all([path, `${path}-wal`, `${path}-shm`].map((p) => rm(p, { force: true })));
}

/** Makes the target fresh before opening it: the default file is deleted; a given file is left for the emptiness check. */
export async function prepareTarget(target: Target): Promise<void> {
  if (target.kind === "file" && target.isDefault) await removeDbFiles(target.path);
  else if (target.kind === "file" && existsSync(target.path)) log(`--db ${target.path} exists; it must be empty`);
}

/** Refuses to benchmark a database that already holds sessions. */
export async function assertEmpty(db: SessionDB): Promise<void> {
  const stats = await db.getStats();
  if (stats.totalSessions > 0 || stats.totalMessages > 0) {
    throw new Error(`${db.location} is not empty (${stats.totalSessions} sessions): the benchmark needs a fresh, empty database`);
  }
}

/** Deletes every session through the public API (server targets, after the run, without --keep). */
export async function wipeSessions(db: SessionDB): Promise<number> {
  let deleted = 0;
  for (;;) {
    const page = await db.listSessions({ limit: 1000, includeChildren: true });
    if (page.items.length === 0) return deleted;
    for (const s of page.items) if (await db.deleteSession(s.id)) deleted++;
  }
}
