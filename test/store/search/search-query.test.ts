import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";

import { MAX_QUERY_OPERANDS, type ParsedQuery, parseSearchQuery, toIndexText } from "../../../src/store/search/index.js";
import { toFts5Match } from "../../../src/store/sqlite/sqlite-search-query.js";

/** Asserts the `operand (operator operand)*` shape and returns the FTS5 rendering. */
function assertWellFormed(q: ParsedQuery): void {
  expect(q.items.length % 2).toBe(1);
  expect((q.items.length + 1) / 2).toBeLessThanOrEqual(MAX_QUERY_OPERANDS);
  q.items.forEach((item, i) => {
    if (i % 2 === 0) {
      expect(item.kind).toBe("operand");
      if (item.kind !== "operand") return;
      expect(item.tokens.length).toBeGreaterThan(0);
      for (const token of item.tokens) {
        expect(token).not.toBe("");
        expect(token).not.toMatch(/[\s"*]/);
      }
    } else {
      expect(item.kind).toBe("operator");
    }
  });
}

/** The FTS5 rendering of a query, or `null`. */
function render(input: string): string | null {
  const q = parseSearchQuery(input);
  if (q === null) return null;
  assertWellFormed(q);
  return toFts5Match(q);
}

describe("parseSearchQuery + toFts5Match (sanitiser table)", () => {
  const cases: Array<[string, string | null]> = [
    // nothing to search
    ["", null],
    ["   \n\t ", null],
    ["***", null],
    ["🚀🎉", null],
    ["🚀 * 🎉", null],
    ['""', null],
    ['"', null],
    ['" "*', null],
    ["AND", null],
    ["AND OR NOT", null],
    ["( ) : ^ + @ # % / '", null],
    ["\uD800", null],
    // bare words
    ["deploy", '"deploy"'],
    ["deploy server", '"deploy" AND "server"'],
    ["Deploy SERVER", '"Deploy" AND "SERVER"'],
    // phrases
    ['"deploy the server"', '"deploy the server"'],
    ['"deploy the server', '"deploy the server"'],
    ['x "a b', '"x" AND "a b"'],
    ['foo"bar baz"', '"foo" AND "bar baz"'],
    ['"a" "b"', '"a" AND "b"'],
    // operators
    ["a OR b", '"a" OR "b"'],
    ["a AND b", '"a" AND "b"'],
    ["a NOT b", '"a" NOT "b"'],
    ["a NOT b OR c", '"a" NOT "b" OR "c"'],
    ["a or b", '"a" AND "or" AND "b"'],
    ["a and not b", '"a" AND "and" AND "not" AND "b"'],
    ["a AND", '"a"'],
    ["OR b", '"b"'],
    ["NOT b", '"b"'],
    ["a OR OR b", '"a" OR "b"'],
    ["a AND NOT b", '"a" NOT "b"'],
    ["a OR", '"a"'],
    ["a NOT", '"a"'],
    ["(a OR b) AND (NOT c)", '"a" OR "b" NOT "c"'],
    ["NEAR(a b)", '"NEAR a" AND "b"'],
    ["a NEAR b", '"a" AND "NEAR" AND "b"'],
    // prefix
    ["deploy*", '"deploy" *'],
    ["deploy**", '"deploy" *'],
    ["(deploy*)", '"deploy" *'],
    ['"npm run"*', '"npm run" *'],
    ['"npm run*"', '"npm run" *'],
    ["foo*bar", '"foo bar"'],
    ["*foo", '"foo"'],
    ["a * b", '"a" AND "b"'],
    // terms that tokenise to several tokens are phrases
    ["chat-send", '"chat send"'],
    ["gpt-4o-mini", '"gpt 4o mini"'],
    ["my-app.config.ts", '"my app config ts"'],
    ["user@example.com", '"user example com"'],
    ["it's", '"it s"'],
    ["a/b", '"a b"'],
    // separators
    ["C++", '"C"'],
    ["#42", '"42"'],
    ["100%", '"100"'],
    ["TODO: fix", '"TODO" AND "fix"'],
    ["(x", '"x"'],
    ["x^2", '"x 2"'],
    ["+a -b", '"a" AND "b"'],
    ["col:value", '"col value"'],
    ["{a} [b]", '"a" AND "b"'],
    ["deploy 🚀", '"deploy"'],
    ["a\uD800b", '"a b"'],
    // characters that are no operators in our syntax separate words, like a space (issue 12 #10)
    ["love|templates", '"love" AND "templates"'],
    ["a~b", '"a" AND "b"'],
    ["key=value", '"key" AND "value"'],
    ["semi;colon", '"semi" AND "colon"'],
    ["a<b>c", '"a" AND "b" AND "c"'],
    ["back\\slash", '"back" AND "slash"'],
    ["a||b OR c", '"a" AND "b" OR "c"'],
    ["a|OR|b", '"a" OR "b"'],
    ["deploy*|x", '"deploy" * AND "x"'],
    ["| ~ = ; < > \\", null],
    ['"love|templates"', '"love templates"'],
    // CJK
    ["部署", '"部署"'],
    ["部署服务", '"部署 署服 服务"'],
    ["部", '"部" *'],
    ["部*", '"部" *'],
    ["Docker部", '"Docker 部" *'],
    ["使用Docker部署服务", '"使用 Docker 部署 署服 服务"'],
    ["コーヒー", '"コー ーヒ ヒー"'],
    ["한국어", '"한국 국어"'],
    ["＂全角＂", '"全角"'], // fullwidth quotes are quotes after NFKC
    // diacritics are left to the index to fold
    ["café", '"café"'],
  ];
  it.each(cases)("%j → %s", (input, expected) => {
    expect(render(input)).toBe(expected);
  });

  it("keeps the CJK runs of an operand", () => {
    const q = parseSearchQuery("使用Docker部署服务");
    expect(q?.items[0]).toEqual({
      kind: "operand",
      tokens: ["使用", "Docker", "部署", "署服", "服务"],
      prefix: false,
      cjk: ["使用", "部署服务"],
    });
  });

  // Its speed is measured by the benchmark (bench/phases/search.ts, runHugeQueryParse); here: a
  // well-formed, bounded query, within the test's own deadline.
  it("handles huge inputs (100,000 characters of operators, quotes or CJK)", () => {
    for (const input of [
      `${")".repeat(100_000)}a`,
      `${"(".repeat(100_000)}a`,
      `${"*".repeat(100_000)}a`,
      `${'"'.repeat(100_000)}a`,
      `${"a-".repeat(50_000)}*`,
      "a ".repeat(50_000),
      "部".repeat(100_000),
    ]) {
      const q = parseSearchQuery(input);
      expect(q?.items.length, JSON.stringify(input.slice(0, 8))).toBeGreaterThan(0);
      if (q === null) return;
      // The shape assertWellFormed checks, with one assertion per query (100,000 tokens would be 100,000 expect calls).
      expect(q.items.length % 2).toBe(1);
      expect((q.items.length + 1) / 2).toBeLessThanOrEqual(MAX_QUERY_OPERANDS);
      const misplaced = q.items.findIndex((item, i) => item.kind !== (i % 2 === 0 ? "operand" : "operator"));
      expect(misplaced).toBe(-1);
      const badTokens = q.items.flatMap((item) => (item.kind === "operand" ? item.tokens.filter((t) => t === "" || /[\s"*]/u.test(t)) : []));
      expect(badTokens).toEqual([]);
      expect(toFts5Match(q)).not.toBe("");
    }
  });

  it(`keeps at most ${MAX_QUERY_OPERANDS} operands`, () => {
    const words = Array.from({ length: 50 }, (_, i) => `w${i}`);
    const q = parseSearchQuery(words.join(" OR "));
    expect(q).not.toBeNull();
    if (!q) return;
    assertWellFormed(q);
    expect(q.items.filter((i) => i.kind === "operand")).toHaveLength(MAX_QUERY_OPERANDS);
    expect(toFts5Match(q).endsWith(`"w${MAX_QUERY_OPERANDS - 1}"`)).toBe(true);
  });
});

describe("toFts5Match against a real FTS5 table", () => {
  const db = new Database(":memory:");
  afterAll(() => db.close());
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(
    body, content='', contentless_delete=1,
    tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
  )`);
  const docs: Record<number, string> = {
    1: "use chat-send now",
    2: "我们部署了服务",
    3: "使用Docker部署服务",
    4: "the deployment is done",
    5: "we deployed it yesterday",
    6: "TODO: fix the bug",
    7: "mail user@example.com today",
    8: "Un café au lait",
    9: "コーヒーを飲む",
    10: "한국어 형태소 분석",
    11: "send chat later",
    12: "cafe society",
    13: "gpt-4o-mini is a model",
    14: "it's fine",
    15: "東京タワーに行きました",
  };
  const insert = db.prepare("INSERT INTO t(rowid, body) VALUES (?, ?)");
  for (const [id, body] of Object.entries(docs)) insert.run(Number(id), toIndexText(body));
  const select = db.prepare("SELECT rowid AS id FROM t WHERE t MATCH ? ORDER BY rowid");

  function search(input: string): number[] {
    const match = render(input);
    if (match === null) return [];
    return (select.all(match) as Array<{ id: number }>).map((r) => r.id);
  }

  const cases: Array<[string, number[]]> = [
    ['"chat-send"', [1]],
    ["chat-send", [1]],
    ['"chat send"', [1]],
    ["send chat", [1, 11]],
    ["chat OR docker", [1, 3, 11]],
    ["chat NOT later", [1]],
    ["部署", [2, 3]],
    ["服务", [2, 3]],
    ["署服", [3]],
    ["部", [2, 3]],
    ["docker", [3]],
    ["DOCKER", [3]],
    ["Docker部署", [3]],
    ['"使用Docker"', [3]],
    ["deploy*", [4, 5]],
    ["deploy", []],
    ["deployment", [4]],
    ["deploy* NOT yesterday", [4]],
    ["TODO: fix", [6]],
    ["user@example.com", [7]],
    ["example", [7]],
    ["cafe", [8, 12]],
    ["café", [8, 12]],
    ["CAFÉ", [8, 12]],
    ["コーヒー", [9]],
    ["飲む", [9]],
    ["ヒーを", [9]],
    ["東京", [15]],
    ["タワー", [15]],
    ["한국어", [10]],
    ["형태소", [10]],
    ["gpt-4o-mini", [13]],
    ["gpt-4o*", [13]],
    ["it's", [14]],
    ["nothing here", []],
  ];
  it.each(cases)("%j finds %j", (input, expected) => {
    expect(search(input)).toEqual(expected);
  });

  it("never throws on random nasty input (parse + render + MATCH)", () => {
    const alphabet = [
      '"',
      '"',
      "(",
      ")",
      "*",
      "*",
      ":",
      "^",
      "-",
      "+",
      " ",
      " ",
      " ",
      "\t",
      "\n",
      "NEAR",
      "NEAR(",
      "NEAR/2",
      "AND",
      "OR",
      "NOT",
      "and",
      "or",
      "not",
      "{",
      "}",
      "[",
      "]",
      ",",
      ".",
      "'",
      "/",
      "\\",
      "@",
      "#",
      "%",
      "$",
      "&",
      "|",
      "!",
      "~",
      "=",
      "<",
      ">",
      ";",
      "\0",
      "a",
      "b",
      "deploy",
      "chat",
      "x1",
      "é",
      "e\u0301",
      "\u0301",
      "ß",
      "İ",
      "ﬁ",
      "①",
      "Ⅻ",
      "部",
      "署",
      "服务",
      "コ",
      "ー",
      "ｶ",
      "한",
      "ㄱ",
      "〇",
      "々",
      "🚀",
      "👍🏽",
      "👨‍👩‍👧",
      "\uFE0F",
      "\u200B",
      "\u200D",
      "\uD800",
      "\uDC00",
      "\uDBFF\uDFFF",
      "\uE000",
      "＂",
      "＊",
      "（",
      "：",
      "\u3000",
    ];
    let seed = 20240611;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let queries = 0;
    for (let i = 0; i < 2000; i++) {
      let input = "";
      const len = rand(24);
      for (let j = 0; j < len; j++) input += alphabet[rand(alphabet.length)];
      let q: ParsedQuery | null = null;
      expect(() => {
        q = parseSearchQuery(input);
      }, JSON.stringify(input)).not.toThrow();
      if (q === null) continue;
      assertWellFormed(q);
      const match = toFts5Match(q);
      expect(() => select.all(match), `${JSON.stringify(input)} → ${match}`).not.toThrow();
      queries++;
    }
    expect(queries).toBeGreaterThan(1000);
  });
});
