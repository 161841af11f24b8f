/**
 * Terminal output of the `threadline` command: colour (off under NO_COLOR or when not a
 * terminal), relative times, tables, JSON, and the error line on stderr.
 *
 * @module
 */
export { processIo, type CliIo, type SignalSource } from "./cli-io.js";
import type { CliIo } from "./cli-io.js";
import { displayWidth, isOneColumnEach } from "./display-width.js";

export { displayWidth } from "./display-width.js";

/** Whether to colour output on this stream: a terminal, and NO_COLOR unset (or empty). */
export function useColor(io: CliIo, stream: CliIo["stdout"] | CliIo["stderr"] = io.stdout): boolean {
  const noColor = io.env["NO_COLOR"];
  if (noColor !== undefined && noColor !== "") return false;
  if (io.env["FORCE_COLOR"] !== undefined && io.env["FORCE_COLOR"] !== "0") return true;
  return stream.isTTY === true;
}

/** ANSI styles that turn into plain text when colour is off. */
export function styles(enabled: boolean): {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
  yellow(s: string): string;
} {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), cyan: wrap(36, 39), yellow: wrap(33, 39) };
}

/**
 * A time relative to `now` as people read it: `just now`, `5m ago`, `3h ago`, `yesterday`,
 * `4d ago`, then the date (`2026-03-14`).
 */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.max(0, now - at);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  const days = Math.floor(seconds / 86_400);
  if (days === 1) return "yesterday";
  if (days < 7) return `${days}d ago`;
  const d = new Date(at * 1000);
  const p2 = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
}

/** The grapheme segmenter, made on first use (making one loads the ICU break data: milliseconds a command that never cuts non-ASCII text does not spend). */
let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of `text` (characters as people see them). */
function graphemes(text: string): Iterable<Intl.SegmentData> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return segmenter.segment(text);
}

/** {@link truncate} of text with escape sequences (string-width strips them from the whole text first): the whole text measured. */
function cutMeasuringAll(folded: string, max: number, budget: number): string {
  if (displayWidth(folded) <= max) return folded;
  let kept = "";
  let used = 0;
  for (const { segment } of graphemes(folded)) {
    const width = displayWidth(segment);
    if (used + width > budget) break;
    kept += segment;
    used += width;
  }
  return `${kept}…`;
}

/**
 * Cuts text to at most `max` terminal columns, ending in `…` when cut, whitespace folded.
 * It cuts between whole characters as people see them (grapheme clusters), so an emoji
 * sequence or a letter with its accents is kept or dropped whole; a wide character that
 * does not fit leaves its column blank rather than overflowing.
 */
export function truncate(text: string, max: number): string {
  const folded = text.replace(/\s+/gu, " ").trim();
  const budget = Math.max(0, max - 1);
  if (isOneColumnEach(folded)) return folded.length <= max ? folded : `${folded.slice(0, budget)}…`;
  if (/[\u001b\u009b]/u.test(folded)) return cutMeasuringAll(folded, max, budget);
  // Only what comes before the cut is measured: a wide character far past it needs no string-width.
  let kept = "";
  let used = 0;
  let cut: string | null = null;
  for (const { segment } of graphemes(folded)) {
    const width = displayWidth(segment);
    if (cut === null && used + width > budget) cut = kept;
    used += width;
    if (used > max) return `${cut ?? kept}…`;
    kept += segment;
  }
  return folded;
}

/** `text` padded with spaces to `width` columns (display width; longer text is left as is). */
export function padToWidth(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}

/** Lays rows out in left-aligned columns (header first), two spaces apart, by display width. */
export function table(header: string[], rows: string[][]): string {
  const width = header.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ""))));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : padToWidth(c, width[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** Writes a value as pretty JSON plus a newline. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
