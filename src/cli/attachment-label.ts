/**
 * How a transcript names an attachment: `[image: photo.jpg, image/jpeg, 195.3 KiB]`,
 * `[voice note, audio/ogg, 12.0 KiB]`, `[file: report.pdf, application/pdf, 1.2 MiB: the Q3 numbers]`.
 * File names, captions and types come from strangers: escape sequences and control characters
 * are stripped before they reach the terminal.
 *
 * @module
 */
import type { AttachmentRef } from "../store/index.js";
import { formatBytes } from "./byte-size.js";

/** The longest file name or caption shown (in characters); longer ones end in `…`. */
const MAX_SHOWN = 120;

/**
 * Terminal escape sequences: CSI (`ESC [` or U+009B, parameters, a final byte), strings (OSC,
 * DCS, SOS, PM, APC, up to BEL or ST or the end), and other escapes (`ESC`, intermediates, a final byte).
 */
const ESCAPES =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|\u001b[ -/]*[0-~]/gu;
/** Control characters, line and paragraph separators, and bidi overrides/isolates. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/gu;

/**
 * Untrusted text made safe for one line of a terminal: escape sequences and control characters
 * removed, whitespace runs as one space, trimmed, at most {@link MAX_SHOWN} characters.
 *
 * @example
 * terminalSafe("a\u001b[31mred\u001b[0m\nname"); // "ared name"
 */
export function terminalSafe(text: string): string {
  const cleaned = text
    .replace(ESCAPES, "")
    .replace(/[\t\n\r\v\f]+/gu, " ")
    .replace(CONTROLS, "")
    .replace(/\s+/gu, " ")
    .trim();
  const chars = [...cleaned];
  return chars.length > MAX_SHOWN ? `${chars.slice(0, MAX_SHOWN - 1).join("")}…` : cleaned;
}

/**
 * An attachment part as one bracketed label. `stored: false` adds `; bytes not stored` (an
 * import made without media).
 */
export function attachmentLabel(ref: Partial<AttachmentRef>, { stored = true }: { stored?: boolean } = {}): string {
  const name = typeof ref.fileName === "string" ? terminalSafe(ref.fileName) : "";
  const type = typeof ref.mimeType === "string" ? terminalSafe(ref.mimeType) : "";
  const size = typeof ref.size === "number" && Number.isFinite(ref.size) ? formatBytes(ref.size) : "";
  const caption = typeof ref.caption === "string" ? terminalSafe(ref.caption) : "";
  const voice = ref.kind === "audio" && ref.voice === true;
  const kind = voice ? "voice note" : typeof ref.kind === "string" ? terminalSafe(ref.kind) : "attachment";
  const facts = [voice ? "" : name, type, size].filter((v) => v !== "").join(", ");
  const head = voice ? (facts === "" ? kind : `${kind}, ${facts}`) : facts === "" ? kind : `${kind}: ${facts}`;
  return `[${head}${stored ? "" : "; bytes not stored"}${caption === "" ? "" : `: ${caption}`}]`;
}
