import { describe, expect, it } from "vitest";

import {
  DEFAULT_INDEX_MAX_CHARS,
  analyzeText,
  cjkCharCount,
  cutUtf16,
  foldForMatch,
  toIndexText,
  tokenize,
  wordSpans,
} from "../../../src/store/search/index.js";

describe("tokenize", () => {
  const cases: Array<[string, string[]]> = [
    ["", []],
    ["hello world", ["hello", "world"]],
    ["Hello, World!", ["Hello", "World"]],
    ["my-app.config.ts", ["my", "app", "config", "ts"]],
    ["user@example.com", ["user", "example", "com"]],
    ["it's", ["it", "s"]],
    ["C++ and C#", ["C", "and", "C"]],
    ["#42 100%", ["42", "100"]],
    ["snake_case", ["snake", "case"]],
    ["tabs\tand\nnewlines\r\n", ["tabs", "and", "newlines"]],
    ["emoji 🚀 only 🎉🎉", ["emoji", "only"]],
    ["🚀", []],
    ["café naïve", ["café", "naïve"]],
    ["cafe\u0301", ["café"]], // NFKC composes
    ["ﬁle ①", ["file", "1"]], // NFKC compatibility forms
    ["ＡＢＣ１２３", ["ABC123"]], // fullwidth → ASCII
    ["\u0301", []], // a lone mark is not a token
    ["x\uD800y", ["x", "y"]], // a lone surrogate separates
    ["\uE000priv", ["\uE000priv"]], // private use is a word character
    // Chinese
    ["部署服务", ["部署", "署服", "服务"]],
    ["部", ["部"]],
    ["我们部署了服务", ["我们", "们部", "部署", "署了", "了服", "服务"]],
    ["使用Docker部署服务", ["使用", "Docker", "部署", "署服", "服务"]],
    ["部署，服务。", ["部署", "服务"]],
    ["2024年", ["2024", "年"]],
    // Japanese: kana + kanji, the prolonged sound mark stays in the run
    ["コーヒーを飲む", ["コー", "ーヒ", "ヒー", "ーを", "を飲", "飲む"]],
    ["ｺｰﾋｰ", ["コー", "ーヒ", "ヒー"]], // halfwidth katakana → NFKC
    ["東京タワー", ["東京", "京タ", "タワ", "ワー"]],
    // Korean
    ["한국어 형태소", ["한국", "국어", "형태", "태소"]],
    ["서울", ["서울"]],
  ];
  it.each(cases)("%j", (text, expected) => {
    expect(tokenize(text)).toEqual(expected);
  });

  it("reports the CJK runs", () => {
    expect(analyzeText("使用Docker部署服务")).toEqual({
      tokens: ["使用", "Docker", "部署", "署服", "服务"],
      cjk: ["使用", "部署服务"],
    });
  });
});

describe("cjkCharCount", () => {
  it.each([
    ["docker", 0],
    ["部", 1],
    ["部署", 2],
    ["한국", 2],
    ["123", 0],
  ] as Array<[string, number]>)("%j → %i", (token, n) => {
    expect(cjkCharCount(token)).toBe(n);
  });
});

describe("toIndexText", () => {
  it("gives the index exactly our tokens: CJK runs as bigrams set apart, other text as written", () => {
    const samples = ["Use chat-send\n\nnow: 部署服务!", "使用Docker部署服务", "café naïve résumé 🚀 東京", "plain ascii-text.ts"];
    for (const text of samples) {
      // What unicode61 sees in the index text is split on non-token characters, like tokenize().
      expect(tokenize(toIndexText(text))).toEqual(tokenize(text));
    }
    expect(toIndexText("使用Docker部署服务")).toContain(" 部署 署服 服务 ");
    expect(toIndexText("使用Docker部署服务").split(/\s+/u)).toContain("Docker");
  });

  it("indexes only the first maxChars characters", () => {
    expect(toIndexText("alpha beta gamma", 10)).toBe("alpha beta");
    expect(toIndexText(`${"a".repeat(DEFAULT_INDEX_MAX_CHARS)} tail`)).toBe("a".repeat(DEFAULT_INDEX_MAX_CHARS));
  });

  it("never splits a surrogate pair at the cap", () => {
    expect(cutUtf16("a😀b", 2)).toBe("a");
    expect(cutUtf16("a😀b", 3)).toBe("a😀");
    expect(cutUtf16("ab", 0)).toBe("");
  });
});

describe("foldForMatch", () => {
  it.each([
    ["café", "cafe"],
    ["CAFÉ", "cafe"],
    ["cafe\u0301", "cafe"],
    ["Naïve", "naive"],
    ["Ångström", "angstrom"],
    ["ﬁle", "file"],
    ["部署", "部署"],
  ])("%j → %j", (input, folded) => {
    expect(foldForMatch(input)).toBe(folded);
  });

  it("folds café and cafe equal", () => {
    expect(foldForMatch("café")).toBe(foldForMatch("cafe"));
  });
});

describe("wordSpans", () => {
  it("gives offsets of non-CJK words in the text as written", () => {
    const text = "使用Docker, café!";
    const words = [...wordSpans(text)].map((s) => text.slice(s.start, s.end));
    expect(words).toEqual(["Docker", "café"]);
  });
});
