import { describe, expect, it } from "vitest";

import { type HighlightTerms, buildSnippet, contextText, highlightTerms, parseSearchQuery } from "../../../src/store/search/index.js";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function termsOf(query: string): HighlightTerms {
  const q = parseSearchQuery(query);
  if (!q) throw new Error(`no query for ${query}`);
  return highlightTerms(q);
}

describe("highlightTerms", () => {
  it.each([
    ["deploy", { words: ["deploy"], prefixes: [], cjk: [] }],
    ["Café DOCKER", { words: ["cafe", "docker"], prefixes: [], cjk: [] }],
    ["deploy*", { words: [], prefixes: ["deploy"], cjk: [] }],
    ['"npm run"*', { words: ["npm"], prefixes: ["run"], cjk: [] }],
    ["chat NOT send", { words: ["chat"], prefixes: [], cjk: [] }],
    ["a NOT b OR c", { words: ["a", "c"], prefixes: [], cjk: [] }],
    ["使用Docker部署", { words: ["docker"], prefixes: [], cjk: ["使用", "部署"] }],
    ["部", { words: [], prefixes: [], cjk: ["部"] }],
    ["x x X", { words: ["x"], prefixes: [], cjk: [] }],
  ] as Array<[string, HighlightTerms]>)("%j", (query, expected) => {
    expect(termsOf(query)).toEqual(expected);
  });
});

describe("buildSnippet", () => {
  const cases: Array<[string, string, string, number?]> = [
    ["short text", "deploy", "short text"],
    ["we deploy it", "deploy", "we >>>deploy<<< it"],
    ["line one\r\n\tline  two deploy", "deploy", "line one line two >>>deploy<<<"],
    ["Deploy then DEPLOY", "deploy", ">>>Deploy<<< then >>>DEPLOY<<<"],
    ["the deployment was deployed", "deploy*", "the >>>deployment<<< was >>>deployed<<<"],
    ["the deployment was deployed", "deploy", "the deployment was deployed"],
    ["Un Café au lait", "cafe", "Un >>>Café<<< au lait"],
    ["a cafe\u0301 here", "café", "a >>>cafe\u0301<<< here"],
    ["我们部署了服务", "部署", "我们>>>部署<<<了服务"],
    ["使用Docker部署服务", "docker 部署", "使用>>>Docker部署<<<服务"],
    ["使用Docker部署服务", "部", "使用Docker>>>部<<<署服务"],
    ["use chat-send now", "chat-send", "use >>>chat<<<->>>send<<< now"],
    ["chat and send", "chat NOT send", ">>>chat<<< and send"],
    ["alpha beta gamma delta", "zeta", "alpha beta g...", 12],
  ];
  it.each(cases)("%j with %j", (text, query, expected, max) => {
    expect(buildSnippet(text, termsOf(query), max)).toBe(expected);
  });

  it("starts about 40 characters before the first match, at a word boundary", () => {
    const text = `${"lorem ipsum dolor sit amet ".repeat(8)}the needle is here ${"and more filler text ".repeat(10)}`;
    const snippet = buildSnippet(text, termsOf("needle"));
    expect(snippet.startsWith("...")).toBe(true);
    expect(snippet.endsWith("...")).toBe(true);
    expect(snippet).toContain(">>>needle<<<");
    const before = snippet.slice(3, snippet.indexOf(">>>"));
    expect(before.length).toBeGreaterThan(20);
    expect(before.length).toBeLessThanOrEqual(40);
    // Starts on a whole word.
    expect(text).toContain(` ${before}`);
    // About maxChars long (markers and ellipses aside).
    const bare = snippet.replace(/>>>|<<<|\.\.\./g, "");
    expect(bare.length).toBeGreaterThan(120);
    expect(bare.length).toBeLessThanOrEqual(160);
  });

  it("fills the window backwards when the match is near the end", () => {
    const text = `${"word ".repeat(100)}needle end`;
    const snippet = buildSnippet(text, termsOf("needle"));
    expect(snippet.startsWith("...")).toBe(true);
    expect(snippet.endsWith(">>>needle<<< end")).toBe(true);
    expect(snippet.length).toBeGreaterThan(140);
  });

  it("wraps every match inside the window", () => {
    const snippet = buildSnippet("x y x y x", termsOf("x"));
    expect(snippet).toBe(">>>x<<< y >>>x<<< y >>>x<<<");
  });

  it("without a match gives the first maxChars characters", () => {
    const text = "abcdefghij".repeat(20);
    expect(buildSnippet(text, termsOf("zzz"))).toBe(`${text.slice(0, 160)}...`);
    expect(buildSnippet("abc", { words: [], prefixes: [], cjk: [] })).toBe("abc");
    expect(buildSnippet("", termsOf("zzz"))).toBe("");
  });

  it("never splits a surrogate pair", () => {
    expect(buildSnippet("😀".repeat(100), termsOf("zzz"), 161)).toBe(`${"😀".repeat(80)}...`);
    // The window start falls inside an emoji pair (no space to snap to).
    const text = `x${"😀".repeat(30)}-deploy${" tail".repeat(40)}`;
    const snippet = buildSnippet(text, termsOf("deploy"));
    expect(snippet).toContain(">>>deploy<<<");
    expect(LONE_SURROGATE.test(snippet)).toBe(false);
    // The window end falls inside an emoji pair.
    const text2 = `deploy ${"😀".repeat(200)}`;
    expect(LONE_SURROGATE.test(buildSnippet(text2, termsOf("deploy"), 100))).toBe(false);
    expect(LONE_SURROGATE.test(buildSnippet(text2, termsOf("deploy"), 101))).toBe(false);
  });

  it("never produces lone surrogates from well-formed text (random)", () => {
    const pieces = ["😀", "🚀", " ", "deploy", "x", "部署", "\n", "é", "-"];
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 300; i++) {
      let text = "";
      const len = rand(120);
      for (let j = 0; j < len; j++) text += pieces[rand(pieces.length)];
      const snippet = buildSnippet(text, termsOf("deploy 部署"), 10 + rand(60));
      expect(LONE_SURROGATE.test(snippet)).toBe(false);
    }
  });

  it("only looks for matches in the indexed part of a huge text", () => {
    const text = `${"a ".repeat(60_000)}needle`;
    const snippet = buildSnippet(text, termsOf("needle"));
    expect(snippet).not.toContain(">>>");
    expect(snippet.endsWith("...")).toBe(true);
  });
});

describe("contextText", () => {
  it.each([
    ["", ""],
    ["  hello \r\n\t world  ", "hello world"],
    ["a\n\n\nb", "a b"],
  ])("%j → %j", (text, expected) => {
    expect(contextText(text)).toBe(expected);
  });

  it("cuts to 200 code points", () => {
    expect(contextText("x".repeat(500))).toBe("x".repeat(200));
    expect(contextText("😀".repeat(300))).toBe("😀".repeat(200));
    expect(contextText("abcdef", 3)).toBe("abc");
    expect(contextText("ab    cd", 3)).toBe("ab");
  });
});
