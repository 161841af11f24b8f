/**
 * PostgreSQL relevance search with a phrase checks word positions only in the newest
 * PHRASE_WINDOW messages holding all of its words (docs/api.md, Search syntax): results are
 * still phrase matches only; an older phrase match beyond the window is reached with
 * `sort: "newest"`/`"oldest"`, which walk every match.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionDB } from "../../../src/index.js";
import { PostgresSessionDB } from "../../../src/store/postgres/index.js";
import { parseSearchQuery } from "../../../src/store/search/index.js";
import { PHRASE_WINDOW } from "../../../src/store/postgres/postgres-search.js";
import { toLooseTsQuery, toTsQuery } from "../../../src/store/postgres/postgres-search-query.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";

function loose(query: string): string | null {
  return toLooseTsQuery(parseSearchQuery(query)!);
}

describe("toLooseTsQuery: phrases loosened to their words, matching every match of the exact query", () => {
  it.each([
    ['"alpha beta"', "((('alpha' & 'beta')))"],
    ["chat-send", "((('chat' & 'send')))"],
    ['"npm run"*', "((('npm' & 'run':*)))"],
    ['x "alpha beta" OR z', "(('x') & (('alpha' & 'beta'))) | (('z'))"],
    ['x NOT "alpha beta"', "(('x'))"],
    ['"alpha beta" NOT y', "((('alpha' & 'beta') & !'y'))"],
  ])("%s → %s", (query, expected) => {
    expect(loose(query)).toBe(expected);
  });

  it("is null without a phrase (the exact query is as cheap)", () => {
    expect(loose("alpha beta")).toBeNull();
    expect(loose("alpha NOT beta")).toBeNull();
    expect(loose("dep*")).toBeNull();
    expect(toTsQuery(parseSearchQuery("alpha beta")!)).toBe("(('alpha') & ('beta'))");
  });
});

describe("postgres: relevance search of a phrase within a bounded window", () => {
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  let db: SessionDB;
  let oldPhrase: number;
  let newPhrase: number;

  beforeAll(async () => {
    await requirePostgres();
    db = await PostgresSessionDB.open({ connectionString: TEST_PG_URL, schema });
    const { id } = await db.createSession({ source: "cli" });
    oldPhrase = await db.appendMessage(id, { role: "user", content: "the alpha beta release" });
    // More messages holding both words (never as the phrase) than the window holds.
    for (let done = 0; done < PHRASE_WINDOW; done += 500) {
      await db.appendTurn(
        id,
        Array.from({ length: 500 }, (_, i) => ({ role: "assistant" as const, content: `beta before alpha, number ${done + i}` })),
      );
    }
    newPhrase = await db.appendMessage(id, { role: "user", content: "is alpha beta out?" });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await dropSchema(schema);
  });

  it("finds only phrase matches, among the newest messages holding all the words", async () => {
    const hits = await db.searchMessages('"alpha beta"', { limit: 50 });
    expect(hits.map((h) => h.messageId)).toEqual([newPhrase]);
    expect(hits[0]!.snippet).toContain(">>>alpha<<< >>>beta<<<");
  });

  it("newest and oldest walk every match, beyond the window", async () => {
    expect((await db.searchMessages('"alpha beta"', { sort: "newest", limit: 50 })).map((h) => h.messageId)).toEqual([newPhrase, oldPhrase]);
    expect((await db.searchMessages('"alpha beta"', { sort: "oldest", limit: 50 })).map((h) => h.messageId)).toEqual([oldPhrase, newPhrase]);
  });

  it("a query without a phrase is not bounded by the window", async () => {
    const hits = await db.searchMessages("alpha beta release", { limit: 5 });
    expect(hits.map((h) => h.messageId)).toEqual([oldPhrase]);
  });
});
