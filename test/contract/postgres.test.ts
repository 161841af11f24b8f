import { randomBytes } from "node:crypto";
import pg from "pg";
import { openSessionDB } from "../../src/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { StoreClosedError } from "../../src/store/errors.js";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import { runContract } from "./index.js";
import { dropSchema, requirePostgres, SchemaResetter, TEST_PG_URL } from "./postgres-server.js";

/** The schema of each open store. */
const schemas = new Map<SessionDB, string>();
/** Migrated schemas no open store uses: emptied and handed to the next test. */
const free: string[] = [];
/** Every schema this file created (dropped at the end). */
const created: string[] = [];
const resetter = new SchemaResetter();

runContract({
  name: "postgres",
  beforeAll: requirePostgres,
  async afterAll() {
    await resetter.close();
    for (const schema of created.splice(0)) await dropSchema(schema);
  },
  async createStore() {
    // Isolation as the initializer requires: an empty schema no open store uses. One is
    // created (and migrated) only when none is free; otherwise a used one is emptied.
    let schema = free.pop();
    if (schema === undefined) {
      schema = `tl_test_${randomBytes(6).toString("hex")}`;
      created.push(schema);
    } else {
      await resetter.reset(schema);
    }
    const store = await openSessionDB(TEST_PG_URL, { schema, poolSize: 4 });
    schemas.set(store, schema);
    return store;
  },
  async destroyStore(store) {
    await store.close().catch((e: unknown) => {
      if (!(e instanceof StoreClosedError)) throw e;
    });
    const schema = schemas.get(store);
    schemas.delete(store);
    if (schema !== undefined && ![...schemas.values()].includes(schema)) free.push(schema);
  },
  async openAnother(store) {
    return openSessionDB(TEST_PG_URL, { schema: schemas.get(store)!, poolSize: 4 });
  },
  async execRaw(store, sql, params) {
    const client = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL), options: `-c search_path=${schemas.get(store)!}` });
    await client.connect();
    try {
      let n = 0;
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      );
    } finally {
      await client.end();
    }
  },
});
