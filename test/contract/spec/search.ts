/**
 * Contract: `searchMessages`: query syntax, the input sanitiser, CJK, filters, paging,
 * sorting, snippets, hit fields and context.
 *
 * @module
 */

import { expect } from "vitest";
import type { NewMessage, SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError } from "../../../src/store/errors.js";
import { assistant, contractArea, expectReject, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** Appends each text as its own message to a fresh session; returns text → message id. */
async function corpus(
  db: SessionDB,
  texts: string[],
  session: { id?: string; source?: string; model?: string; startedAt?: number } = {},
): Promise<Map<string, number>> {
  const id = session.id ?? "corpus";
  await db.createSession({
    id,
    source: session.source ?? "cli",
    model: session.model ?? null,
    startedAt: session.startedAt ?? 1000,
  });
  const out = new Map<string, number>();
  let t = (session.startedAt ?? 1000) + 1;
  for (const text of texts) out.set(text, await db.appendMessage(id, user(text, t++)));
  return out;
}

async function hitIds(db: SessionDB, query: string): Promise<number[]> {
  return (await db.searchMessages(query, { limit: 1000 })).map((h) => h.messageId);
}

/** [query, text of a message that contains it] */
const SANITISER_TABLE: Array<[string, string]> = [
  ["C++", "I write C++ every day"],
  ["(x", "then call f(x) twice"],
  ["a AND", "wire a AND gate here"],
  ["user@example.com", "please mail user@example.com today"],
  ["it's", "it's working now"],
  ["a/b", "the path a/b is wrong"],
  ["#42", "this fixes #42 finally"],
  ["100%", "running at 100% capacity"],
  ["TODO: fix", "TODO: fix the parser later"],
  ['"hello world', "hello world again"],
  ['hello world"', "hello world again"],
  ["chat-send", "use chat-send to post"],
  ["gpt-4o-mini", "switched to gpt-4o-mini yesterday"],
  ["my-app.config.ts", "edit my-app.config.ts please"],
  ["NEAR(alpha", "call NEAR(alpha) now"],
  ["title:draft", "the title:draft label"],
  ["^start", "caret ^start here"],
  ["{braces}", "curly {braces} here"],
  ["back\\slash", "a back\\slash here"],
  ["-minus", "a value of -minus one"],
  ["+plus", "add +plus one"],
  ["semi;colon", "semi;colon separated"],
  ["dollar$", "costs dollar$ much"],
  ["under_score", "snake under_score name"],
  ["'single'", "quoted 'single' word"],
  ["pipe|bar", "a pipe|bar here"],
  ["tilde~x", "approx tilde~x here"],
  ["key=value", "set key=value now"],
  ["less<more", "when less<more holds"],
  ["more>less", "when more>less holds"],
];

/**
 * [query, text]: characters that are no operators in our syntax (`|`, `~`, `=`, `;`, `<`,
 * `>`, `\`) separate words, so the query means the words it contains, wherever they are.
 */
const SEPARATOR_TABLE: Array<[string, string]> = [
  ["love|templates", "I love C++ templates"],
  ["templates~love", "I love C++ templates"],
  ["love=templates", "I love C++ templates"],
  ["love;templates", "I love C++ templates"],
  ["love<templates", "I love C++ templates"],
  ["love>templates", "I love C++ templates"],
  ["love\\templates", "I love C++ templates"],
  ["love|templ*", "I love C++ templates"],
  ["|love| |templates|", "I love C++ templates"],
];

/** Inputs that must neither throw nor need to match anything. */
const HOSTILE_QUERIES = [
  "",
  "   ",
  '"',
  '""',
  "'",
  "***",
  "*",
  "AND",
  "OR",
  "NOT",
  "AND OR NOT",
  "a OR",
  "OR a",
  "NOT a",
  "a NOT",
  "a AND OR b",
  ")",
  "(",
  "()",
  "((a)",
  "{a b}",
  "NEAR(a b, 3)",
  "a:b:c",
  ":",
  "^",
  "-",
  "+",
  "%",
  "_",
  "\\",
  "\u0000",
  "\uD800",
  "a\uDC00b",
  "x".repeat(10_000),
  "a ".repeat(2_000),
  "*a",
  "a**",
  "'; DROP TABLE messages; --",
  "🚀🔥",
  "\t\n\r",
];

export function searchTests(init: SessionDBTestInitializer): void {
  contractArea(init, "search", (test, { db }) => {
    test("words are ANDed, in any order and position", async () => {
      const m = await corpus(db(), ["alpha beta gamma", "beta then later alpha", "alpha only", "beta only"]);
      expect(new Set(await hitIds(db(), "alpha beta"))).toEqual(new Set([m.get("alpha beta gamma"), m.get("beta then later alpha")]));
    });

    test('"phrases" match adjacent words in order', async () => {
      const m = await corpus(db(), ["the quick brown fox", "brown and quick", "quick, brown!"]);
      expect(new Set(await hitIds(db(), '"quick brown"'))).toEqual(new Set([m.get("the quick brown fox"), m.get("quick, brown!")]));
    });

    test("OR, NOT and prefix*", async () => {
      const m = await corpus(db(), ["alpha beta", "alpha gamma", "delta", "deployment done", "we deployed it", "deploy now"]);
      expect(new Set(await hitIds(db(), "beta OR delta"))).toEqual(new Set([m.get("alpha beta"), m.get("delta")]));
      expect(await hitIds(db(), "alpha NOT beta")).toEqual([m.get("alpha gamma")]);
      expect(new Set(await hitIds(db(), "deploy*"))).toEqual(new Set([m.get("deployment done"), m.get("we deployed it"), m.get("deploy now")]));
    });

    test("no stemming: a word matches as written", async () => {
      const m = await corpus(db(), ["deployment done", "we deployed it", "deploy now", "deploys daily"]);
      expect(await hitIds(db(), "deploy")).toEqual([m.get("deploy now")]);
      expect(await hitIds(db(), "deployed")).toEqual([m.get("we deployed it")]);
    });

    test("matching is case- and diacritic-insensitive", async () => {
      const m = await corpus(db(), ["Meet at the café", "plain cafe here", "DOCKER compose", "Zoë and Ångström"]);
      expect(new Set(await hitIds(db(), "cafe"))).toEqual(new Set([m.get("Meet at the café"), m.get("plain cafe here")]));
      expect(new Set(await hitIds(db(), "café"))).toEqual(new Set([m.get("Meet at the café"), m.get("plain cafe here")]));
      expect(await hitIds(db(), "docker")).toEqual([m.get("DOCKER compose")]);
      expect(await hitIds(db(), "zoe angstrom")).toEqual([m.get("Zoë and Ångström")]);
    });

    test("the sanitiser table: no input throws, and each finds the message that contains it", async () => {
      const texts = [...new Set(SANITISER_TABLE.map(([, text]) => text))];
      const m = await corpus(db(), [...texts, "unrelated filler text"]);
      for (const [query, text] of SANITISER_TABLE) {
        let found: number[] = [];
        try {
          found = await hitIds(db(), query);
        } catch (error) {
          throw new Error(`searchMessages(${JSON.stringify(query)}) threw: ${String(error)}`);
        }
        expect(found, `searchMessages(${JSON.stringify(query)})`).toContain(m.get(text));
      }
    });

    test("| ~ = ; < > \\ separate words: the query means the words it contains", async () => {
      const m = await corpus(db(), ["I love C++ templates", "love only", "templates only", "unrelated filler text"]);
      for (const [query, text] of SEPARATOR_TABLE) {
        expect(await hitIds(db(), query), `searchMessages(${JSON.stringify(query)})`).toEqual([m.get(text)]);
      }
      expect(new Set(await hitIds(db(), "love|OR|templates"))).toEqual(new Set([m.get("I love C++ templates"), m.get("love only"), m.get("templates only")]));
      expect(await hitIds(db(), "| ~ = ; < > \\")).toEqual([]);
    });

    test("hyphenated and dotted words match as phrases", async () => {
      const m = await corpus(db(), [
        "use chat-send to post",
        "send the chat now",
        "switched to gpt-4o-mini yesterday",
        "mini gpt and 4o models",
        "edit my-app.config.ts please",
        "my config app in ts",
      ]);
      expect(await hitIds(db(), "chat-send")).toEqual([m.get("use chat-send to post")]);
      expect(await hitIds(db(), "gpt-4o-mini")).toEqual([m.get("switched to gpt-4o-mini yesterday")]);
      expect(await hitIds(db(), "my-app.config.ts")).toEqual([m.get("edit my-app.config.ts please")]);
    });

    test("hostile input never throws", async () => {
      await corpus(db(), ["a b c x alpha", "🚀 launch"]);
      for (const query of HOSTILE_QUERIES) {
        let result: unknown;
        try {
          result = await db().searchMessages(query);
        } catch (error) {
          throw new Error(`searchMessages(${JSON.stringify(query.slice(0, 40))}) threw: ${String(error)}`);
        }
        expect(Array.isArray(result)).toBe(true);
      }
    });

    test("queries that sanitise to nothing return no hits", async () => {
      await corpus(db(), ["*** stars ***", "AND OR NOT", "🚀🔥 launch"]);
      for (const query of ["", "   ", "***", "AND OR NOT", "🚀🔥", '""', "()"]) {
        expect(await db().searchMessages(query), JSON.stringify(query)).toEqual([]);
      }
    });

    test("a dangling operator is dropped", async () => {
      const m = await corpus(db(), ["just alpha", "alpha and beta", "gamma"]);
      expect(new Set(await hitIds(db(), "AND alpha"))).toEqual(new Set([m.get("just alpha"), m.get("alpha and beta")]));
      expect(new Set(await hitIds(db(), "alpha AND"))).toEqual(new Set([m.get("just alpha"), m.get("alpha and beta")]));
      expect(new Set(await hitIds(db(), "alpha OR"))).toEqual(new Set([m.get("just alpha"), m.get("alpha and beta")]));
    });

    test("CJK: Chinese substrings of 2+ characters", async () => {
      const m = await corpus(db(), ["我们明天讨论数据库迁移方案", "今天天气很好", "北京大学", "京大和北京的大学"]);
      const migration = m.get("我们明天讨论数据库迁移方案");
      for (const q of ["数据库", "迁移", "讨论数据", "库迁", "我们明天讨论数据库迁移方案"]) {
        expect(await hitIds(db(), q), q).toEqual([migration]);
      }
      expect(await hitIds(db(), "天气")).toEqual([m.get("今天天气很好")]);
      expect(await hitIds(db(), "方法")).toEqual([]);
      // A substring, not a bag of its character pairs.
      expect(await hitIds(db(), "北京大学")).toEqual([m.get("北京大学")]);
    });

    test("CJK: Japanese substrings (kanji, hiragana, katakana)", async () => {
      const m = await corpus(db(), ["東京で会議があります", "データベースを更新しました", "大阪の天気"]);
      for (const q of ["会議", "東京", "があり", "会議が", "あります"]) {
        expect(await hitIds(db(), q), q).toEqual([m.get("東京で会議があります")]);
      }
      for (const q of ["ベース", "データ", "更新"]) {
        expect(await hitIds(db(), q), q).toEqual([m.get("データベースを更新しました")]);
      }
    });

    test("CJK: Korean substrings", async () => {
      const m = await corpus(db(), ["데이터베이스 마이그레이션 계획", "오늘 날씨가 좋아요"]);
      for (const q of ["마이그레이션", "이그", "베이스", "계획", "데이터베이스 계획"]) {
        expect(await hitIds(db(), q), q).toEqual([m.get("데이터베이스 마이그레이션 계획")]);
      }
      expect(await hitIds(db(), "날씨")).toEqual([m.get("오늘 날씨가 좋아요")]);
    });

    test("CJK: a Latin word inside a CJK run is its own word", async () => {
      const m = await corpus(db(), ["使用Docker部署服务", "docker is great", "部署完成"]);
      expect(new Set(await hitIds(db(), "docker"))).toEqual(new Set([m.get("使用Docker部署服务"), m.get("docker is great")]));
      expect(new Set(await hitIds(db(), "部署"))).toEqual(new Set([m.get("使用Docker部署服务"), m.get("部署完成")]));
      expect(await hitIds(db(), "docker 部署")).toEqual([m.get("使用Docker部署服务")]);
    });

    test("an emoji-only query returns no hits and no error", async () => {
      await corpus(db(), ["🚀🔥", "launch 🚀 now"]);
      expect(await db().searchMessages("🚀")).toEqual([]);
      expect(await db().searchMessages("🚀🔥")).toEqual([]);
    });

    test("tool names are searchable", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("look it up", 1));
      const toolMsg = await db().appendMessage("s", {
        role: "tool",
        content: "3 results found",
        toolCallId: "c1",
        toolName: "web_search",
        timestamp: 2,
      });
      const hits = await db().searchMessages("web_search");
      expect(hits.map((h) => h.messageId)).toEqual([toolMsg]);
      expect(hits[0]?.toolName).toBe("web_search");
      expect(hits[0]?.role).toBe("tool");
    });

    test("text parts of structured content are searchable", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const id = await db().appendMessage("s", {
        role: "user",
        content: [
          { type: "text", text: "describe this unicorn" },
          { type: "image_url", image_url: { url: "https://x/y.png" } },
        ],
      });
      expect(await hitIds(db(), "unicorn")).toEqual([id]);
    });

    test("a hit carries the message and session fields", async () => {
      await db().createSession({ id: "s1", source: "telegram", model: "claude-x", startedAt: 500.5 });
      await db().appendMessage("s1", user("before", 600));
      const id = await db().appendMessage("s1", {
        role: "assistant",
        content: "The needle is here.",
        timestamp: 601.25,
      });
      const [hit, ...rest] = await db().searchMessages("needle");
      expect(rest).toEqual([]);
      expect(hit).toMatchObject({
        messageId: id,
        sessionId: "s1",
        role: "assistant",
        timestamp: 601.25,
        toolName: null,
        source: "telegram",
        model: "claude-x",
        sessionStartedAt: 500.5,
      });
      expect(hit?.snippet).toMatch(/>>>needle<<</);
    });

    test("snippets wrap every match in >>> and <<<", async () => {
      await corpus(db(), ["Deploy the Docker image, then deploy again", "使用Docker部署服务"]);
      const [hit] = await db().searchMessages("deploy");
      expect(hit?.snippet).toContain(">>>Deploy<<<");
      expect(hit?.snippet).toContain(">>>deploy<<<");
      expect(hit?.snippet).toContain("Docker image");
      const cjk = await db().searchMessages("部署");
      expect(cjk[0]?.snippet).toContain(">>>");
      expect(cjk[0]?.snippet).toContain("<<<");
      expect(cjk[0]?.snippet.replace(/>>>|<<</g, "")).toContain("部署");
    });

    test("context holds the neighbouring messages of the same session, cut to 200 characters", async () => {
      await db().createSession({ id: "other", source: "cli", startedAt: 1 });
      await db().appendMessage("other", user("other session message", 2));
      await db().createSession({ id: "s", source: "cli", startedAt: 10 });
      const long = `${"x".repeat(150)} ${"y".repeat(300)}`;
      const first = await db().appendMessage("s", user("first target", 11));
      const second = await db().appendMessage("s", assistant(long, 12));
      const third = await db().appendMessage("s", user("middle target", 13));
      const fourth = await db().appendMessage("s", assistant("after the middle", 14));
      await db().appendMessage("other", user("interleaved other session message", 15));

      const [firstHit] = await db().searchMessages('"first target"');
      expect(firstHit?.messageId).toBe(first);
      expect(firstHit?.context.before).toBeNull();
      expect(firstHit?.context.after).toMatchObject({ id: second, role: "assistant", content: long.slice(0, 200), timestamp: 12 });

      const [middleHit] = await db().searchMessages('"middle target"');
      expect(middleHit?.messageId).toBe(third);
      expect(middleHit?.context.before).toMatchObject({ id: second, role: "assistant", content: long.slice(0, 200), timestamp: 12 });
      expect(middleHit?.context.after).toMatchObject({ id: fourth, role: "assistant", content: "after the middle", timestamp: 14 });

      const [lastHit] = await db().searchMessages('"after the middle"');
      expect(lastHit?.context.before?.id).toBe(third);
      expect(lastHit?.context.after).toBeNull();
    });

    test("filters: sources, excludeSources and roles", async () => {
      const ids: Record<string, number> = {};
      for (const [session, source] of [
        ["c", "cli"],
        ["t", "telegram"],
        ["d", "discord"],
      ] as const) {
        await db().createSession({ id: session, source, startedAt: 1 });
        ids[`${session}-user`] = await db().appendMessage(session, user("shared keyword", 2));
        ids[`${session}-assistant`] = await db().appendMessage(session, assistant("shared keyword", 3));
        ids[`${session}-tool`] = await db().appendMessage(session, {
          role: "tool",
          content: "shared keyword",
          toolCallId: "x",
          toolName: "t",
          timestamp: 4,
        });
      }
      const search = async (opts: Parameters<SessionDB["searchMessages"]>[1]) =>
        new Set((await db().searchMessages("keyword", { limit: 100, ...opts })).map((h) => h.messageId));
      const pick = (...keys: string[]) => new Set(keys.map((k) => ids[k]));
      expect(await search({})).toEqual(new Set(Object.values(ids)));
      expect(await search({ sources: ["telegram"] })).toEqual(pick("t-user", "t-assistant", "t-tool"));
      expect(await search({ sources: ["telegram", "discord"] })).toEqual(pick("t-user", "t-assistant", "t-tool", "d-user", "d-assistant", "d-tool"));
      expect(await search({ excludeSources: ["cli"] })).toEqual(pick("t-user", "t-assistant", "t-tool", "d-user", "d-assistant", "d-tool"));
      expect(await search({ roles: ["user"] })).toEqual(pick("c-user", "t-user", "d-user"));
      expect(await search({ roles: ["assistant", "tool"], sources: ["cli"] })).toEqual(pick("c-assistant", "c-tool"));
      expect(await search({ roles: ["system"] })).toEqual(new Set());
      expect(await search({ sources: ["nowhere"] })).toEqual(new Set());
    });

    test("limit, offset and sort by newest or oldest", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: 1 });
      const byTime: number[] = [];
      for (let i = 0; i < 30; i++) byTime.push(await db().appendMessage("s", user(`needle number ${i}`, 100 + i)));
      await db().createSession({ id: "t", source: "cli", startedAt: 1 });
      await db().appendMessage("t", user("no match here", 50));

      expect(await db().searchMessages("needle")).toHaveLength(20);
      expect(await db().searchMessages("needle", { limit: 1000 })).toHaveLength(30);

      const newest = (await db().searchMessages("needle", { sort: "newest", limit: 30 })).map((h) => h.messageId);
      expect(newest).toEqual([...byTime].reverse());
      const oldest = (await db().searchMessages("needle", { sort: "oldest", limit: 30 })).map((h) => h.messageId);
      expect(oldest).toEqual(byTime);

      const page2 = (await db().searchMessages("needle", { sort: "newest", limit: 5, offset: 5 })).map((h) => h.messageId);
      expect(page2).toEqual([...byTime].reverse().slice(5, 10));
      const page1 = (await db().searchMessages("needle", { sort: "oldest", limit: 7 })).map((h) => h.messageId);
      expect(page1).toEqual(byTime.slice(0, 7));
      expect(await db().searchMessages("needle", { offset: 30 })).toEqual([]);

      const relevance = (await db().searchMessages("needle", { sort: "relevance", limit: 30 })).map((h) => h.messageId);
      expect(new Set(relevance)).toEqual(new Set(byTime));
      const r1 = (await db().searchMessages("needle", { limit: 10 })).map((h) => h.messageId);
      const r2 = (await db().searchMessages("needle", { limit: 10, offset: 10 })).map((h) => h.messageId);
      expect(new Set([...r1, ...r2]).size).toBe(20);
    });

    test("newest and oldest order by message time across sessions", async () => {
      await db().createSession({ id: "a", source: "cli", startedAt: 1 });
      await db().createSession({ id: "b", source: "cli", startedAt: 1 });
      const a1 = await db().appendMessage("a", user("ordered word", 10));
      const b1 = await db().appendMessage("b", user("ordered word", 20));
      const a2 = await db().appendMessage("a", user("ordered word", 30));
      expect((await db().searchMessages("ordered", { sort: "newest" })).map((h) => h.messageId)).toEqual([a2, b1, a1]);
      expect((await db().searchMessages("ordered", { sort: "oldest" })).map((h) => h.messageId)).toEqual([a1, b1, a2]);
    });

    test("search limit outside 1 to 1,000 is an InvalidInputError", async () => {
      await corpus(db(), ["word"]);
      expect(await db().searchMessages("word", { limit: 1000 })).toHaveLength(1);
      for (const limit of [0, 1001]) {
        await expectReject(() => db().searchMessages("word", { limit }), InvalidInputError, /limit/i);
      }
      await expectReject(() => db().searchMessages("word", { offset: -1 }), InvalidInputError, /offset/i);
    });

    test("the index follows replaceMessages, clearMessages and deleteSession", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("original walrus"));
      expect(await hitIds(db(), "walrus")).toHaveLength(1);
      const [newId] = await db().replaceMessages("s", [user("replacement narwhal")]);
      expect(await hitIds(db(), "walrus")).toEqual([]);
      expect(await hitIds(db(), "narwhal")).toEqual([newId]);
      await db().clearMessages("s");
      expect(await hitIds(db(), "narwhal")).toEqual([]);
      await db().appendMessage("s", user("final platypus"));
      await db().deleteSession("s");
      expect(await hitIds(db(), "platypus")).toEqual([]);
    });

    test("messages with every field type are found; non-matching sessions are not", async () => {
      const turn: NewMessage[] = [
        user("quartz question", 1),
        { role: "assistant", content: null, toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }], timestamp: 2 },
        { role: "tool", content: "quartz result", toolCallId: "c", toolName: "f", timestamp: 3 },
      ];
      await db().createSession({ id: "s", source: "cli" });
      const [q, , r] = await db().appendTurn("s", turn);
      expect(new Set(await hitIds(db(), "quartz"))).toEqual(new Set([q, r]));
    });
  });
}
