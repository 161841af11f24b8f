/**
 * Text analysis for full-text search, shared by every backend.
 *
 * We tokenise in JavaScript and hand the index our own token stream joined by single
 * spaces; queries are rendered from the same tokenisation, so both sides agree. The
 * backend's tokenizer only needs to split on spaces and fold case and diacritics
 * (SQLite: `unicode61 remove_diacritics 2 categories 'L* N* Co M*'`).
 *
 * Rules (after NFKC normalisation):
 * - a *word* is a maximal run of letters, numbers, private-use characters and marks
 *   (`\p{L} \p{N} \p{Co} \p{M}`) that are not CJK; case is kept (the index folds it);
 * - a CJK character is a letter or number of the Han, Hiragana, Katakana or Hangul
 *   script (by Script_Extensions, so the prolonged sound mark `ー` is kana), together
 *   with any marks that follow it; a CJK run of two or more characters becomes its
 *   overlapping bigrams (`部署服务` → `部署 署服 服务`), a run of one stays as is;
 * - everything else (spaces, punctuation, symbols, emoji) separates tokens and is dropped.
 *
 * @module
 */

/** A CJK base character (letter or number of a CJK script). Marks that follow it belong to it. */
const CJK_BASE = "(?:(?=[\\p{L}\\p{N}\\p{Co}])[\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}])";
/** One CJK character: a base and its marks. */
const CJK_CHAR = `${CJK_BASE}\\p{M}*`;
/** A word character that does not start a CJK character. */
const WORD_CHAR = `(?:(?!${CJK_BASE})[\\p{L}\\p{N}\\p{Co}\\p{M}])`;

/** Group 1: a CJK run; group 2: a word. */
/**
 * The patterns on Unicode script properties, built on first use: building them takes about
 * 2 ms, which opening a store and listing sessions (the command line's `sessions list`) do
 * not need to pay (issue 31).
 */
interface ScriptPatterns {
  TOKEN_RUN: RegExp;
  CJK_CHARS: RegExp;
  CJK_START: RegExp;
  CJK_RUNS: RegExp;
  HAS_CJK: RegExp;
}
let scriptPatterns: ScriptPatterns | null = null;
function patterns(): ScriptPatterns {
  scriptPatterns ??= {
    TOKEN_RUN: new RegExp(`((?:${CJK_CHAR})+)|(${WORD_CHAR}+)`, "gu"),
    CJK_CHARS: new RegExp(CJK_CHAR, "gu"),
    CJK_START: new RegExp(`^${CJK_BASE}`, "u"),
    CJK_RUNS: new RegExp(`(?:${CJK_CHAR})+`, "gu"),
    HAS_CJK: /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u,
  };
  return scriptPatterns;
}
const ONLY_MARKS = /^\p{M}+$/u;
const MARKS = /\p{M}/gu;

/** A span of a string, in UTF-16 code units (`end` exclusive). */
export interface TextSpan {
  start: number;
  end: number;
}

/**
 * The spans of the words (non-CJK runs, as in {@link tokenize}) of `text` as written,
 * without normalisation, so that offsets point into `text` itself.
 */
export function* wordSpans(text: string): Generator<TextSpan> {
  for (const m of text.matchAll(patterns().TOKEN_RUN)) {
    if (m[2] !== undefined) yield { start: m.index, end: m.index + m[2].length };
  }
}

/** How many characters of a text {@link toIndexText} indexes by default. */
export const DEFAULT_INDEX_MAX_CHARS = 16_000;

/** The tokens of a text and the CJK runs they came from. */
export interface AnalyzedText {
  /** Index tokens, in order (see {@link tokenize}). */
  tokens: string[];
  /** The CJK runs of the (NFKC-normalised) text, in order, as written. */
  cjk: string[];
}

/**
 * Tokenises `text` and also reports its CJK runs (used to highlight CJK matches,
 * which are substrings rather than words).
 */
export function analyzeText(text: string): AnalyzedText {
  const tokens: string[] = [];
  const cjk: string[] = [];
  for (const m of text.normalize("NFKC").matchAll(patterns().TOKEN_RUN)) {
    const run = m[1];
    if (run !== undefined) {
      cjk.push(run);
      const chars = run.match(patterns().CJK_CHARS) ?? [];
      if (chars.length === 1) tokens.push(run);
      for (let i = 0; i + 1 < chars.length; i++) tokens.push(`${chars[i]}${chars[i + 1]}`);
    } else if (m[2] !== undefined && !ONLY_MARKS.test(m[2])) {
      // A run of marks alone (no base character) carries nothing searchable.
      tokens.push(m[2]);
    }
  }
  return { tokens, cjk };
}

/**
 * Splits `text` into index tokens: NFKC, then words and CJK bigrams as described in
 * the module documentation. `"my-app.config.ts"` → `my app config ts`;
 * `"使用Docker部署服务"` → `使用 Docker 部署 署服 服务`.
 */
export function tokenize(text: string): string[] {
  return analyzeText(text).tokens;
}

/**
 * How many CJK characters `token` (as produced by {@link tokenize}) holds: 0 for a word,
 * 1 for a lone CJK character, 2 for a bigram.
 */
export function cjkCharCount(token: string): number {
  const { CJK_START, CJK_CHARS } = patterns();
  return CJK_START.test(token) ? (token.match(CJK_CHARS)?.length ?? 0) : 0;
}

/**
 * The text to hand the index for `text`: its tokens joined by single spaces.
 *
 * Only the first `maxChars` UTF-16 code units of the input are indexed (a surrogate
 * pair is never split). The cap keeps huge tool outputs from bloating the index; a
 * match beyond it is not found.
 */
export function toIndexText(text: string, maxChars: number = DEFAULT_INDEX_MAX_CHARS): string {
  const capped = cutUtf16(text, maxChars);
  // Fast path: without CJK, the index tokenizer (unicode61, categories L* N* Co M*)
  // splits the NFKC text into exactly the tokens we would, so hand it the text as is.
  if (ASCII_ONLY.test(capped)) return capped;
  const normalized = capped.normalize("NFKC");
  const { HAS_CJK, CJK_RUNS } = patterns();
  if (!HAS_CJK.test(normalized)) return normalized;
  // Only CJK runs need rewriting (into bigrams, set apart by spaces); the rest is
  // tokenised by the index exactly as we would.
  return normalized.replace(CJK_RUNS, (run) => ` ${tokenize(run).join(" ")} `);
}

const ASCII_ONLY = /^[\x00-\x7F]*$/;

/**
 * Folds a string for comparing with index tokens the way the index does, approximately
 * (`unicode61 remove_diacritics 2`): NFKD, marks removed, lower case. `café` and `cafe`
 * fold equal.
 */
export function foldForMatch(s: string): string {
  return s.normalize("NFKD").replace(MARKS, "").toLowerCase();
}

/** The first `max` UTF-16 code units of `s`, one fewer if that would split a surrogate pair. */
export function cutUtf16(s: string, max: number): string {
  if (s.length <= max) return s;
  const end = Math.max(0, Math.floor(max));
  const last = s.charCodeAt(end - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}
