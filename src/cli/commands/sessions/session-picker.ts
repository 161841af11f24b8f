/**
 * The interactive session picker of `threadline sessions browse`, in the terminal. Typing
 * filters over title, preview, id and source (every word must match, case-insensitive);
 * ↑/↓ (also PgUp/PgDn, Home/End) move; Enter picks the session (the action, browse-action.ts,
 * resumes it in `threadline chat`); Esc clears the filter, or leaves when it is empty; Ctrl-C leaves.
 *
 * The pure parts (key decoding, filtering, the state machine, rendering) are exported for
 * tests; {@link pickSession} runs them on a raw-mode terminal.
 *
 * @module
 */
import type { SessionSummary } from "../../../store/index.js";
import { CliError } from "../../cli-context.js";
import { displayWidth, padToWidth, relativeTime, styles, truncate, useColor, type CliIo } from "../../cli-output.js";
import { noPreview } from "../../session-table.js";

/** A key the picker understands. */
export type PickerKey =
  | { name: "text"; text: string }
  | { name: "backspace" | "clear" | "up" | "down" | "pageUp" | "pageDown" | "home" | "end" | "enter" | "escape" | "interrupt" };

/** The picker's state. */
export interface PickerState {
  /** What was typed. */
  filter: string;
  /** Index into the filtered rows. */
  selected: number;
  /** First filtered row on screen. */
  scroll: number;
}

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** What a key did. */
export type PickerAction = { kind: "none" } | { kind: "pick"; id: string } | { kind: "exit" };

const SEQUENCES: ReadonlyArray<[string, PickerKey["name"]]> = [
  ["\u001b[A", "up"],
  ["\u001bOA", "up"],
  ["\u001b[B", "down"],
  ["\u001bOB", "down"],
  ["\u001b[5~", "pageUp"],
  ["\u001b[6~", "pageDown"],
  ["\u001b[H", "home"],
  ["\u001bOH", "home"],
  ["\u001b[1~", "home"],
  ["\u001b[F", "end"],
  ["\u001bOF", "end"],
  ["\u001b[4~", "end"],
];

/**
 * Decodes a chunk of raw terminal input into keys. A lone ESC (nothing after it in the
 * chunk) is the Escape key; unknown escape sequences are ignored.
 */
export function decodeKeys(chunk: string): PickerKey[] {
  const keys: PickerKey[] = [];
  let i = 0;
  while (i < chunk.length) {
    const c = chunk[i]!;
    if (c === "\u001b") {
      const known = SEQUENCES.find(([seq]) => chunk.startsWith(seq, i));
      if (known !== undefined) {
        keys.push({ name: known[1] } as PickerKey);
        i += known[0].length;
        continue;
      }
      const rest = chunk.slice(i + 1);
      if (rest === "" || rest[0] === "\u001b") {
        keys.push({ name: "escape" });
        i += 1;
        continue;
      }
      // Skip an unknown CSI/SS3 sequence (ESC [ … final byte, ESC O x) or ESC + one character.
      const csi = /^(?:\[[0-?]*[ -/]*[@-~]|O.|.)/su.exec(rest);
      i += 1 + (csi?.[0].length ?? 0);
      continue;
    }
    if (c === "\r" || c === "\n") keys.push({ name: "enter" });
    else if (c === "\u007f" || c === "\b") keys.push({ name: "backspace" });
    else if (c === "\u0003" || c === "\u0004") keys.push({ name: "interrupt" });
    else if (c === "\u0015") keys.push({ name: "clear" });
    else if (c === "\u0010") keys.push({ name: "up" });
    else if (c === "\u000e") keys.push({ name: "down" });
    else if (c >= " ") {
      const last = keys.at(-1);
      if (last?.name === "text") last.text += c;
      else keys.push({ name: "text", text: c });
    }
    i += 1;
  }
  return keys;
}

/** Whether a session matches the filter: every whitespace-separated word occurs in its title, preview, id or source. */
export function matchesFilter(session: Pick<SessionSummary, "id" | "title" | "preview" | "source">, filter: string): boolean {
  const words = filter
    .toLowerCase()
    .split(/\s+/u)
    .filter((w) => w !== "");
  if (words.length === 0) return true;
  const haystack = [session.title ?? "", session.preview ?? "", session.id, session.source].join("\n").toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The sessions matching the filter, in listing order. */
export function filterSessions<T extends Pick<SessionSummary, "id" | "title" | "preview" | "source">>(sessions: readonly T[], filter: string): T[] {
  return sessions.filter((s) => matchesFilter(s, filter));
}

/**
 * Applies one key: returns the next state and what to do. `visibleRows` is how many rows
 * fit on screen (paging and scrolling use it).
 */
export function applyKey(
  state: PickerState,
  key: PickerKey,
  sessions: ReadonlyArray<Pick<SessionSummary, "id" | "title" | "preview" | "source">>,
  visibleRows: number,
): { state: PickerState; action: PickerAction } {
  const rows = Math.max(1, visibleRows);
  let { filter, selected } = state;
  let action: PickerAction = { kind: "none" };
  switch (key.name) {
    case "text":
      filter += key.text;
      selected = 0;
      break;
    case "backspace":
      // One character as people see it: an emoji sequence or a letter with its accents.
      filter = [...GRAPHEMES.segment(filter)]
        .slice(0, -1)
        .map((g) => g.segment)
        .join("");
      selected = 0;
      break;
    case "clear":
      filter = "";
      selected = 0;
      break;
    case "escape":
      if (filter === "") action = { kind: "exit" };
      filter = "";
      selected = 0;
      break;
    case "interrupt":
      action = { kind: "exit" };
      break;
    case "up":
      selected -= 1;
      break;
    case "down":
      selected += 1;
      break;
    case "pageUp":
      selected -= rows;
      break;
    case "pageDown":
      selected += rows;
      break;
    case "home":
      selected = 0;
      break;
    case "end":
      selected = Number.MAX_SAFE_INTEGER;
      break;
    case "enter":
      break;
  }
  const matching = filterSessions(sessions, filter);
  selected = Math.max(0, Math.min(selected, matching.length - 1));
  if (key.name === "enter" && matching[selected] !== undefined) action = { kind: "pick", id: matching[selected]!.id };
  let scroll = filter === state.filter ? state.scroll : 0;
  if (selected < scroll) scroll = selected;
  if (selected >= scroll + rows) scroll = selected - rows + 1;
  scroll = Math.max(0, Math.min(scroll, Math.max(0, matching.length - rows)));
  return { state: { filter, selected, scroll }, action };
}

/** Options of {@link renderPicker}. */
export interface PickerRenderOptions {
  width: number;
  height: number;
  now: number;
  color: boolean;
}

/** Lines above and below the rows. */
const CHROME_LINES = 5;

/** How many session rows fit on a screen of `height` lines. */
export function visibleRowsFor(height: number): number {
  return Math.max(1, height - CHROME_LINES);
}

/** `text` cut and padded to exactly `width` terminal columns. */
function fit(text: string, width: number): string {
  return padToWidth(truncate(text, width), width);
}

/** The whole picker screen (each line cut to the width; the selected row marked `>`). */
export function renderPicker(state: PickerState, sessions: readonly SessionSummary[], options: PickerRenderOptions): string {
  const s = styles(options.color);
  const width = Math.max(40, options.width);
  const matching = filterSessions(sessions, state.filter);
  const rows = visibleRowsFor(options.height);
  const idWidth = Math.max(8, ...matching.slice(state.scroll, state.scroll + rows).map((m) => m.id.length));
  const timeWidth = 11;
  const srcWidth = 10;
  const rest = Math.max(10, width - 2 - idWidth - timeWidth - srcWidth - 8);
  const titleWidth = Math.max(6, Math.floor(rest * 0.4));
  const previewWidth = Math.max(4, rest - titleWidth);
  const line = (cells: string[]): string => cells.join("  ");
  const out: string[] = [];
  out.push(truncate("Sessions: type to filter, ↑/↓ to move, Enter to resume, Esc to clear (Esc again to leave)", width));
  out.push(`${s.bold("Filter:")} ${state.filter}`);
  out.push(s.dim(`  ${line([fit("Title", titleWidth), fit("Preview", previewWidth), fit("Last Active", timeWidth), fit("Src", srcWidth), "ID"])}`));
  const shown = matching.slice(state.scroll, state.scroll + rows);
  shown.forEach((session, i) => {
    const index = state.scroll + i;
    const text = line([
      fit(session.title ?? "-", titleWidth),
      fit(session.preview ?? noPreview(session), previewWidth),
      fit(relativeTime(session.lastActiveAt, options.now), timeWidth),
      fit(session.source, srcWidth),
      session.id,
    ]);
    out.push(index === state.selected ? s.bold(s.cyan(`> ${text}`)) : `  ${text}`);
  });
  if (matching.length === 0) out.push(s.dim(`  No session matches "${state.filter}".`));
  const count =
    matching.length === sessions.length ? `${sessions.length} session${sessions.length === 1 ? "" : "s"}` : `${matching.length} of ${sessions.length} sessions`;
  out.push(s.dim(count));
  return out.join("\n");
}

/**
 * Runs the picker on a terminal (raw mode, the alternate screen) and resolves with the
 * chosen session id, or `null` when the person left.
 */
export async function pickSession(io: CliIo, sessions: readonly SessionSummary[]): Promise<string | null> {
  const stdin = io.stdin;
  const stdout = io.stdout as CliIo["stdout"] & {
    rows?: number;
    on?: (event: string, fn: () => void) => unknown;
    off?: (event: string, fn: () => void) => unknown;
  };
  if (stdin.isTTY !== true || stdout.isTTY !== true || typeof stdin.setRawMode !== "function") {
    throw new CliError("TL_ERR_USAGE", 'sessions browse needs an interactive terminal; in scripts use "threadline sessions list" (or --json).');
  }
  const color = useColor(io);
  let state: PickerState = { filter: "", selected: 0, scroll: 0 };
  const size = (): { width: number; height: number } => ({ width: stdout.columns ?? 80, height: stdout.rows ?? 24 });
  const draw = (): void => {
    const { width, height } = size();
    const screen = renderPicker(state, sessions, { width, height, now: io.now(), color });
    stdout.write(`\u001b[H\u001b[2J${screen.split("\n").join("\r\n")}`);
    // The cursor waits at the end of the filter line.
    stdout.write(`\u001b[2;${displayWidth(`Filter: ${state.filter}`) + 1}H`);
  };
  stdout.write("\u001b[?1049h");
  stdin.setRawMode!(true);
  stdin.setEncoding?.("utf8");
  return new Promise<string | null>((resolve) => {
    const finish = (result: string | null): void => {
      stdin.off("data", onData);
      stdout.off?.("resize", draw);
      stdin.setRawMode!(false);
      stdin.pause();
      stdout.write("\u001b[?1049l");
      resolve(result);
    };
    const onData = (chunk: string | Buffer): void => {
      for (const key of decodeKeys(typeof chunk === "string" ? chunk : chunk.toString("utf8"))) {
        const next = applyKey(state, key, sessions, visibleRowsFor(size().height));
        state = next.state;
        if (next.action.kind === "pick") {
          finish(next.action.id);
          return;
        }
        if (next.action.kind === "exit") {
          finish(null);
          return;
        }
      }
      draw();
    };
    stdin.on("data", onData);
    stdout.on?.("resize", draw);
    stdin.resume();
    draw();
  });
}
