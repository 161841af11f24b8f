import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openSessionDB } from "../../src/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { StoreClosedError } from "../../src/store/errors.js";
import { runContract } from "./index.js";

const dirs = new Map<SessionDB, string>();

runContract({
  name: "sqlite",
  async createStore() {
    const dir = mkdtempSync(join(tmpdir(), "tl-"));
    const store = await openSessionDB(join(dir, "state.db"));
    dirs.set(store, dir);
    return store;
  },
  async destroyStore(store) {
    await store.close().catch((e: unknown) => {
      if (!(e instanceof StoreClosedError)) throw e;
    });
    rmSync(dirs.get(store)!, { recursive: true, force: true });
    dirs.delete(store);
  },
  async openAnother(store) {
    return openSessionDB(store.location);
  },
  async execRaw(store, sql, params) {
    const raw = new Database(store.location);
    try {
      raw.pragma("busy_timeout = 5000");
      raw.prepare(sql).run(...params);
    } finally {
      raw.close();
    }
  },
});
