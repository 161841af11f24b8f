import stringWidth from "string-width";
import { beforeAll, describe, expect, it } from "vitest";
import { renderPicker } from "../../src/cli/commands/sessions/session-picker.js";
import { table, truncate } from "../../src/cli/cli-output.js";
import { displayWidth, isOneColumnEach, loadDisplayWidth, withDisplayWidth } from "../../src/cli/display-width.js";
import { sessionTable } from "../../src/cli/session-table.js";
import type { SessionSummary } from "../../src/store/index.js";
import { ZERO_USAGE } from "../contract/harness.js";

/** Texts whose display width differs from their length in code points. */
const JAPANESE = "デプロイの手順を教えてください。本番サーバーの設定も確認したいです";
const EMOJI = "👩‍💻 working with 👨‍👩‍👧 family ❤️ and 🇯🇵 flags, a long line of text";
const COMBINING = "Cafe\u0301 de\u0301ja\u0300 vu, re\u0301sume\u0301 of the na\u0308ive pla\u0303n";

const NOW = 2_000_000_000;

function summary(id: string, title: string | null, preview: string | null): SessionSummary {
  return {
    id,
    source: "cli",
    title,
    preview,
    model: null,
    startedAt: NOW - 3600,
    lastActiveAt: NOW - 120,
    endedAt: null,
    endReason: null,
    messageCount: 2,
    parentSessionId: null,
    usage: { ...ZERO_USAGE },
  };
}

/** The display column where `needle` starts in `line`. */
const columnOf = (line: string, needle: string): number => {
  const at = line.indexOf(needle);
  expect(at, `"${needle}" in "${line}"`).toBeGreaterThanOrEqual(0);
  return stringWidth(line.slice(0, at));
};

// string-width loads only for text that needs it (these run first, before anything loads it).
describe("string-width loads only when text needs it", () => {
  it("one-column text is measured without it; other text asks for it, and withDisplayWidth loads it", async () => {
    expect(displayWidth("plain text, café – “quoted” … ‰")).toBe(31);
    expect(() => displayWidth(JAPANESE)).toThrow(/loadDisplayWidth/u);
    // Only what comes before the cut is measured: a wide character past it needs nothing.
    expect(truncate(`${"word ".repeat(20)}${JAPANESE}`, 12)).toBe("word word w…");
    expect(() => truncate(JAPANESE, 12)).toThrow(/loadDisplayWidth/u);
    expect(await withDisplayWidth(() => truncate(JAPANESE, 12))).toBe("デプロイの…");
    expect(displayWidth(JAPANESE)).toBe(stringWidth(JAPANESE));
  });

  it("the characters measured without string-width are one column each in string-width too", async () => {
    await loadDisplayWidth();
    const ranges: Array<[number, number]> = [
      [0x20, 0x7e],
      [0xa0, 0x2ff],
      [0x2010, 0x2040],
    ];
    for (const [from, to] of ranges) {
      for (let code = from; code <= to; code++) {
        const char = String.fromCodePoint(code);
        if (isOneColumnEach(char)) expect(stringWidth(char), `U+${code.toString(16)}`).toBe(1);
      }
    }
    expect(isOneColumnEach("\u00ad")).toBe(false); // the soft hyphen takes no column
    expect(isOneColumnEach("\u203c")).toBe(false); // ‼ may show as an emoji
  });
});

describe("truncate measures display width", () => {
  beforeAll(loadDisplayWidth);

  it.each([
    ["Japanese", JAPANESE],
    ["emoji with ZWJ and variation selectors", EMOJI],
    ["combining marks", COMBINING],
  ])("%s: the result fits the width exactly or under, ends in …, and never splits a character", (_name, text) => {
    for (let width = 1; width < stringWidth(text); width++) {
      const cut = truncate(text, width);
      expect(stringWidth(cut), `width ${width}: "${cut}"`).toBeLessThanOrEqual(width);
      // At most one column is left unused (a wide character that did not fit).
      expect(stringWidth(cut), `width ${width}: "${cut}"`).toBeGreaterThanOrEqual(width - 1);
      expect(cut.endsWith("…")).toBe(true);
      // Every grapheme kept is a whole grapheme of the original.
      const kept = cut.slice(0, -1);
      expect(text.startsWith(kept)).toBe(true);
      const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map((s) => s.segment);
      let joined = "";
      for (const g of graphemes) {
        if (joined.length >= kept.length) break;
        joined += g;
      }
      expect(joined).toBe(kept);
    }
    expect(truncate(text, 200)).toBe(text);
  });

  it("ASCII is unchanged", () => {
    expect(truncate("hello world", 8)).toBe("hello w…");
    expect(truncate("hello", 5)).toBe("hello");
  });
});

describe("tables align by display width", () => {
  beforeAll(loadDisplayWidth);
  it("table() pads wide and zero-width text to the same column", () => {
    const text = table(
      ["Preview", "When"],
      [
        ["plain", "now"],
        ["日本語", "now"],
        ["e\u0301te\u0301", "now"],
        ["👨‍👩‍👧", "now"],
      ],
    );
    const lines = text.split("\n");
    const column = columnOf(lines[0]!, "When");
    for (const line of lines.slice(1)) expect(columnOf(line, "now")).toBe(column);
  });

  it.each([true, false])("sessionTable (titles: %s) keeps Last Active in one column", (withTitles) => {
    const sessions = [
      summary("s_ascii", withTitles ? "Plain title" : null, "plain ascii preview"),
      summary("s_ja", withTitles ? "日本語のタイトルです。長めのタイトルを付けました" : null, JAPANESE),
      summary("s_emoji", withTitles ? "👩‍💻 dev notes" : null, EMOJI),
      summary("s_comb", withTitles ? "Re\u0301sume\u0301" : null, COMBINING),
    ];
    const lines = sessionTable(sessions, { now: NOW }).split("\n");
    const column = columnOf(lines[0]!, "Last Active");
    for (const line of lines.slice(1)) expect(columnOf(line, "2m ago")).toBe(column);
  });
});

describe("the browse picker aligns by display width", () => {
  beforeAll(loadDisplayWidth);
  it("every row's time starts in the header's column, and no line is wider than the screen", () => {
    const sessions = [
      summary("s_ascii", "Plain title", "plain ascii preview"),
      summary("s_ja", "日本語のタイトルです。長めのタイトル", JAPANESE),
      summary("s_emoji", "👩‍💻 dev notes", EMOJI),
      summary("s_comb", "Re\u0301sume\u0301", COMBINING),
    ];
    for (const width of [80, 101, 140]) {
      const screen = renderPicker({ filter: "", selected: 1, scroll: 0 }, sessions, { width, height: 20, now: NOW, color: false });
      const lines = screen.split("\n");
      const header = lines.find((l) => l.includes("Last Active"))!;
      const column = columnOf(header, "Last Active");
      const rows = lines.filter((l) => l.includes("2m ago"));
      expect(rows).toHaveLength(4);
      for (const row of rows) expect(columnOf(row, "2m ago")).toBe(column);
      for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(width);
    }
  });
});

describe("the browse filter edits whole characters", () => {
  beforeAll(loadDisplayWidth);
  it("Backspace removes an accented letter or an emoji sequence whole", async () => {
    const { applyKey } = await import("../../src/cli/commands/sessions/session-picker.js");
    const back = (filter: string): string => applyKey({ filter, selected: 0, scroll: 0 }, { name: "backspace" }, [], 10).state.filter;
    expect(back("cafe\u0301")).toBe("caf");
    expect(back("hi 👨‍👩‍👧")).toBe("hi ");
    expect(back("日本")).toBe("日");
  });
});
