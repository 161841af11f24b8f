/**
 * The pieces both AI SDK codecs (UI messages, model messages) share: the envelope that keeps
 * what Threadline's natural message fields cannot express, reading content parts back, and
 * JSON that must come back exactly.
 *
 * Where the remainder lives, and why: a message's natural fields (role, content text and
 * parts, `toolCalls`, `toolCallId`, `toolName`, `reasoning`) hold everything the CLI, search,
 * the web page and a model need, once. What they cannot say (a UI message's metadata, part
 * order and states, provider metadata, step boundaries, data and source parts, approvals)
 * goes into an envelope in the `reasoningDetails` of the message's first row: the one
 * per-message field that takes any JSON, is never indexed or shown as text, and is never sent
 * to a model by Threadline's own agent. The envelope points into the natural fields instead
 * of copying them (one source of truth): texts, tool inputs and outputs are stored once.
 *
 * @module
 */
import { InvalidInputError, type ContentPart, type Message, type NewMessage } from "../../store/index.js";

/** A JSON object as the envelope keeps it. */
export type JsonObject = Record<string, unknown>;

/**
 * Where one part of a framework message went. `part` is the part without the fields moved
 * into the row; the other fields say where those are.
 */
export interface PlacedPart {
  /** The part minus the fields stored in the row's natural fields (the whole part when `row` is absent). */
  part: JsonObject;
  /** Index of the row (within the message's rows) holding the moved fields. */
  row?: number;
  /** Index of the content part holding its text or file. */
  content?: number;
  /** Length (UTF-16 code units) of its slice of the row's `reasoning` (slices are joined with `\n`). */
  reasoning?: number;
  /** The tool call id whose `toolCalls` entry (and tool result row) hold its input and output. */
  call?: string;
  /** How the input was stored in the call's `arguments`: JSON text, or absent (no input yet). */
  input?: "json" | "absent";
  /** How the tool result row holds the output (see each codec). */
  output?: string;
  /** How a file's data was stored (model messages; see the model codec). */
  data?: string;
}

/** The envelope in the first row's `reasoningDetails`. */
export interface Envelope {
  format: string;
  version: 1;
  /** How many rows (this one and the ones after it) the message was stored as. */
  rows: number;
  /** Message-level fields that have no natural column (UI `metadata`, model `providerOptions`). */
  message?: JsonObject;
  parts: PlacedPart[];
}

/** The envelope of a row when it has one of `format`, else `null`. */
export function envelopeOf(row: Message, format: string): Envelope | null {
  const d = row.reasoningDetails as Partial<Envelope> | null;
  if (d === null || typeof d !== "object" || Array.isArray(d)) return null;
  if (d.format !== format || d.version !== 1 || !Number.isInteger(d.rows) || !Array.isArray(d.parts)) return null;
  return d as Envelope;
}

/** The content of a row as parts (a string is one text part). */
export function contentParts(row: Pick<Message, "content">): ContentPart[] {
  if (row.content === null) return [];
  if (typeof row.content === "string") return [{ type: "text", text: row.content }];
  return row.content;
}

/** Parts as stored: one plain text part as a string (how every other writer stores text), else the parts. */
export function storedContent(parts: ContentPart[]): NewMessage["content"] {
  if (parts.length === 0) return null;
  const only = parts[0]!;
  if (parts.length === 1 && only.type === "text" && Object.keys(only).length === 2 && typeof only.text === "string") return only.text;
  return parts;
}

/** `part` without the named fields. */
export function without(part: object, ...fields: string[]): JsonObject {
  const rest: JsonObject = { ...(part as JsonObject) };
  for (const f of fields) delete rest[f];
  return rest;
}

/** A deep copy through JSON (what the store gives back), so callers never share our objects. */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Parses JSON text, or returns `fallback` when it is not JSON. */
export function parseJsonOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}

/**
 * Thrown inside a decoder when rows do not match their envelope; always caught there, and the
 * message is then read naturally (it never reaches a caller).
 */
export class EnvelopeMismatch extends InvalidInputError {
  constructor(what: string) {
    super(`The stored rows do not match their AI SDK envelope (${what}).`);
  }
}

/** Asserts a decoding precondition (see {@link EnvelopeMismatch}). */
export function expect<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new EnvelopeMismatch(what);
  return value;
}

/** The text of a row's content parts, joined with `\n` (non-text parts skipped). */
export function rowText(row: Pick<Message, "content">): string {
  return contentParts(row)
    .flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : []))
    .join("\n");
}
