import { randomBytes } from "node:crypto";
import { openSessionDB } from "../../src/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { StoreClosedError } from "../../src/store/errors.js";
import { runContract } from "./index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "./postgres-server.js";

const schemas = new Map<SessionDB, string>();

runContract({
  name: "postgres",
  beforeAll: requirePostgres,
  async createStore() {
    const schema = `tl_test_${randomBytes(6).toString("hex")}`;
    const store = await openSessionDB(TEST_PG_URL, { schema, poolSize: 4 });
    schemas.set(store, schema);
    return store;
  },
  async destroyStore(store) {
    await store.close().catch((e: unknown) => { if (!(e instanceof StoreClosedError)) throw e; });
    await dropSchema(schemas.get(store)!);
    schemas.delete(store);
  },
  async openAnother(store) {
    return openSessionDB(TEST_PG_URL, { schema: schemas.get(store)!, poolSize: 4 });
  },
});
