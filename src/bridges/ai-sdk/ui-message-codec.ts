/**
 * AI SDK `UIMessage`s to Threadline messages and back.
 *
 * A UI message becomes one row per step in natural shape, so it reads like any other session:
 * - a user or system message: one row, its text (and file) parts as content;
 * - an assistant message: one `assistant` row per step (a new step starts at a `step-start`
 *   part, or at text after a tool call) with the step's text as content, its reasoning as
 *   `reasoning` and its tool calls as `toolCalls` (`arguments` = the input as JSON), each
 *   followed by one `tool` row per tool call that has a result (output, error text, or a
 *   denial), `toolCallId` and `toolName` set;
 * - every row of the message carries the UI message id as `platformMessageId`.
 *
 * The rest (metadata, part order, states, provider metadata, step starts, sources, data
 * parts, approvals) is the envelope in the first row's `reasoningDetails` (see
 * stored-rows.ts). Loading reverses it exactly; rows without an envelope (written by the
 * gateway, another bridge, or edited since) are read naturally instead.
 *
 * @module
 */
import type { UIMessage } from "ai";
import { attachmentPlaceholder, isAttachmentPart } from "../../context/internal.js";
import { InvalidInputError, type ContentPart, type Message, type NewMessage, type ToolCall } from "../../store/index.js";
import {
  contentParts,
  envelopeOf,
  expect,
  EnvelopeMismatch,
  jsonCopy,
  parseJsonOr,
  rowText,
  storedContent,
  without,
  type Envelope,
  type JsonObject,
  type PlacedPart,
} from "./stored-rows.js";

/** `Envelope.format` of a UI message. */
export const UI_MESSAGE_FORMAT = "threadline.ai-sdk.ui-message";

type Part = JsonObject & { type: string };

/** A row being built, with the tool result rows that follow it. */
interface Draft {
  message: NewMessage;
  content: ContentPart[];
  reasoning: string[];
  toolCalls: ToolCall[];
  results: NewMessage[];
  used: boolean;
}

const isToolPart = (p: Part): boolean => p.type.startsWith("tool-") || p.type === "dynamic-tool";

/** The rows of one UI message, in order, all with `timestamp`. */
export function uiMessageToRows(message: UIMessage, timestamp: number): NewMessage[] {
  const role = message.role;
  if (role !== "user" && role !== "assistant" && role !== "system") {
    throw new InvalidInputError(`role "${String(role)}" is not a UI message role (user, assistant, system).`, { field: "role" });
  }
  const placed: PlacedPart[] = [];
  const drafts: Draft[] = [];
  const newDraft = (): Draft => {
    const d: Draft = { message: { role, platformMessageId: message.id, timestamp }, content: [], reasoning: [], toolCalls: [], results: [], used: false };
    drafts.push(d);
    return d;
  };
  let current = newDraft();
  // Row index of a draft: the drafts before it and their result rows.
  const rowOf = (d: Draft): number => {
    let n = 0;
    for (const x of drafts) {
      if (x === d) return n;
      n += 1 + x.results.length;
    }
    return n;
  };
  const startStep = (): void => {
    if (current.used) current = newDraft();
  };
  for (const raw of message.parts as Part[]) {
    const part = raw;
    if (role === "assistant" && part.type === "step-start") {
      startStep();
      placed.push({ part: jsonCopy(part) });
      continue;
    }
    if (part.type === "text" && typeof part.text === "string") {
      if (current.toolCalls.length > 0) startStep();
      current.used = true;
      current.content.push({ type: "text", text: part.text });
      placed.push({ part: without(part, "text"), row: -1, content: current.content.length - 1, ...bind(current) });
      continue;
    }
    if (part.type === "file" && typeof part.url === "string") {
      if (current.toolCalls.length > 0) startStep();
      current.used = true;
      const cp = fileContentPart(part);
      current.content.push(cp);
      // An image_url part has no file name: the envelope keeps it.
      placed.push({ part: without(part, "url", ...(cp.type === "file" ? ["filename"] : [])), row: -1, content: current.content.length - 1, ...bind(current) });
      continue;
    }
    if (role === "assistant" && part.type === "reasoning" && typeof part.text === "string") {
      if (current.toolCalls.length > 0) startStep();
      current.used = true;
      current.reasoning.push(part.text);
      placed.push({ part: without(part, "text"), row: -1, reasoning: part.text.length, ...bind(current) });
      continue;
    }
    if (role === "assistant" && isToolPart(part) && typeof part.toolCallId === "string") {
      current.used = true;
      const name = part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice("tool-".length);
      const hasInput = part.input !== undefined;
      current.toolCalls.push({
        id: part.toolCallId,
        type: "function",
        function: { name, arguments: hasInput ? JSON.stringify(part.input) : "" },
      });
      const moved = ["toolCallId", "input", ...(part.type === "dynamic-tool" ? ["toolName"] : [])];
      const result = toolResultRow(part, name, message.id, timestamp);
      if (result !== null) {
        moved.push(...result.moved);
        current.results.push(result.row);
      }
      placed.push({
        part: without(part, ...moved),
        row: -1,
        call: part.toolCallId,
        input: hasInput ? "json" : "absent",
        ...(result === null ? {} : { output: result.output }),
        ...bind(current),
      });
      continue;
    }
    // No natural field: step starts of user messages, sources, data parts, anything newer.
    placed.push({ part: jsonCopy(part) });
  }
  for (const p of placed) {
    const d = (p as PlacedPart & { draft?: Draft }).draft;
    if (d !== undefined) {
      p.row = rowOf(d);
      delete (p as { draft?: Draft }).draft;
    }
  }
  const rows: NewMessage[] = [];
  for (const d of drafts) {
    const m = d.message;
    m.content = storedContent(d.content);
    if (d.reasoning.length > 0) m.reasoning = d.reasoning.join("\n");
    if (d.toolCalls.length > 0) m.toolCalls = d.toolCalls;
    rows.push(m, ...d.results);
  }
  const envelope: Envelope = { format: UI_MESSAGE_FORMAT, version: 1, rows: rows.length, parts: placed };
  if (message.metadata !== undefined) envelope.message = { metadata: jsonCopy(message.metadata) };
  rows[0]!.reasoningDetails = envelope;
  return rows;
}

/** Marks a placed part with the draft it went into; the row index is resolved at the end. */
function bind(draft: Draft): { draft: Draft } {
  return { draft };
}

/** A file part as an OpenAI-style content part: images as `image_url`, other files as `file`. */
function fileContentPart(part: Part): ContentPart {
  const url = part.url as string;
  if (typeof part.mediaType === "string" && part.mediaType.startsWith("image/")) return { type: "image_url", image_url: { url } };
  return { type: "file", file: { file_data: url, ...(typeof part.filename === "string" ? { filename: part.filename } : {}) } };
}

/** The tool row of a tool part that has a result, with the fields it took and how. */
function toolResultRow(part: Part, name: string, id: string, timestamp: number): { row: NewMessage; moved: string[]; output: string } | null {
  const base = { role: "tool" as const, toolCallId: part.toolCallId as string, toolName: name, platformMessageId: id, timestamp };
  switch (part.state) {
    case "output-available":
      if (part.output === undefined) return { row: { ...base, content: null }, moved: ["output"], output: "undefined" };
      if (typeof part.output === "string") return { row: { ...base, content: part.output }, moved: ["output"], output: "text" };
      return { row: { ...base, content: JSON.stringify(part.output) }, moved: ["output"], output: "json" };
    case "output-error":
      return { row: { ...base, content: String(part.errorText) }, moved: ["errorText"], output: "error" };
    case "output-denied": {
      const reason = (part.approval as { reason?: unknown } | undefined)?.reason;
      const text = typeof reason === "string" && reason !== "" ? `Tool call denied: ${reason}` : "Tool call denied.";
      return { row: { ...base, content: text }, moved: [], output: "denied" };
    }
    default:
      return null;
  }
}

/** UI messages from stored rows (visible, in transcript order). */
export function rowsToUIMessages(rows: readonly Message[]): UIMessage[] {
  return groupUIMessages(rows).map((g) => g.message);
}

/** UI messages from stored rows, each with how many rows it was read from. */
export function groupUIMessages(rows: readonly Message[]): Array<{ message: UIMessage; rows: number }> {
  const out: Array<{ message: UIMessage; rows: number }> = [];
  let i = 0;
  while (i < rows.length) {
    const row = rows[i]!;
    const envelope = envelopeOf(row, UI_MESSAGE_FORMAT);
    if (envelope !== null && i + envelope.rows <= rows.length) {
      try {
        out.push({ message: decodeEnvelope(envelope, rows.slice(i, i + envelope.rows)), rows: envelope.rows });
        i += envelope.rows;
        continue;
      } catch (error) {
        if (!(error instanceof EnvelopeMismatch)) throw error;
      }
    }
    const taken = naturalMessage(rows, i);
    if (taken.message !== null) out.push({ message: taken.message, rows: taken.rows });
    else if (out.length > 0) out[out.length - 1]!.rows += taken.rows;
    i += taken.rows;
  }
  return out;
}

function decodeEnvelope(envelope: Envelope, rows: Message[]): UIMessage {
  const first = rows[0]!;
  const id = first.platformMessageId ?? `threadline-${first.id}`;
  for (const r of rows) if (r.platformMessageId !== first.platformMessageId) throw new EnvelopeMismatch("rows of two messages");
  const reasoningAt = new Map<number, number>();
  const parts: JsonObject[] = [];
  for (const p of envelope.parts) {
    if (p.row === undefined) {
      parts.push(jsonCopy(p.part));
      continue;
    }
    const row = expect(rows[p.row], "row");
    const type = p.part.type as string;
    if (p.content !== undefined) {
      const cp = expect(contentParts(row)[p.content], "content part");
      if (type === "text") parts.push({ ...jsonCopy(p.part), text: expect(cp.text, "text") });
      else parts.push({ ...jsonCopy(p.part), ...fileFields(cp) });
    } else if (p.reasoning !== undefined) {
      const at = reasoningAt.get(p.row) ?? 0;
      const text = expect(row.reasoning, "reasoning").slice(at, at + p.reasoning);
      reasoningAt.set(p.row, at + p.reasoning + 1);
      parts.push({ ...jsonCopy(p.part), text });
    } else if (p.call !== undefined) {
      const call = expect(
        row.toolCalls?.find((c) => c.id === p.call),
        "tool call",
      );
      const part: JsonObject = { ...jsonCopy(p.part), toolCallId: call.id };
      if (type === "dynamic-tool") part.toolName = call.function.name;
      if (p.input === "json") part.input = parseJsonOr(call.function.arguments, undefined);
      if (p.output !== undefined) {
        const result = expect(
          rows.find((r) => r.role === "tool" && r.toolCallId === call.id),
          "tool result",
        );
        if (p.output === "text") part.output = result.content;
        else if (p.output === "json") part.output = JSON.parse(expect(result.content as string, "output")) as unknown;
        else if (p.output === "undefined") part.output = undefined;
        else if (p.output === "error") part.errorText = result.content;
      }
      parts.push(part);
    } else {
      throw new EnvelopeMismatch("placement");
    }
  }
  const message: UIMessage = { id, role: first.role as UIMessage["role"], parts: parts as UIMessage["parts"] };
  if (envelope.message !== undefined && "metadata" in envelope.message) message.metadata = envelope.message.metadata;
  return message;
}

/** The `url` (and `filename`) of a file part from its content part. */
function fileFields(cp: ContentPart): JsonObject {
  if (cp.type === "image_url") return { url: expect((cp.image_url as { url?: string } | undefined)?.url, "image url") };
  const file = expect(cp.file as { file_data?: string; filename?: string } | undefined, "file");
  return { url: expect(file.file_data, "file data"), ...(file.filename === undefined ? {} : { filename: file.filename }) };
}

/**
 * A UI message from rows that carry no envelope: a user or system row alone; an assistant
 * row with the assistant and tool rows that follow it (tool calls as `dynamic-tool` parts).
 */
function naturalMessage(rows: readonly Message[], start: number): { message: UIMessage | null; rows: number } {
  const row = rows[start]!;
  const id = row.platformMessageId ?? `threadline-${row.id}`;
  if (row.role === "user" || row.role === "system" || row.role === "developer") {
    const parts: JsonObject[] = [];
    for (const cp of contentParts(row)) {
      if (cp.type === "text" && typeof cp.text === "string") parts.push({ type: "text", text: cp.text });
      // A stored attachment has no URL a UI could load here: its placeholder says what it was.
      else if (isAttachmentPart(cp)) parts.push({ type: "text", text: attachmentPlaceholder(cp.attachment) });
      else if (cp.type === "image_url" || cp.type === "file") {
        try {
          const f = fileFields(cp);
          parts.push({ type: "file", mediaType: mediaTypeOf(f.url as string, cp.type), ...f });
        } catch {
          // A content part without a URL has nothing a UI can show.
        }
      }
    }
    return { message: { id, role: row.role === "user" ? "user" : "system", parts: parts as UIMessage["parts"] }, rows: 1 };
  }
  // An assistant turn: assistant rows and their tool rows, up to the next user/system row or envelope.
  const parts: JsonObject[] = [];
  const byCall = new Map<string, JsonObject>();
  let n = 0;
  for (let i = start; i < rows.length; i++) {
    const r = rows[i]!;
    if (i > start && (r.role === "user" || r.role === "system" || r.role === "developer" || envelopeOf(r, UI_MESSAGE_FORMAT) !== null)) break;
    n += 1;
    if (r.role === "assistant") {
      if (r.reasoning) parts.push({ type: "reasoning", text: r.reasoning });
      const text = rowText(r);
      if (text !== "") parts.push({ type: "text", text });
      for (const call of r.toolCalls ?? []) {
        const part: JsonObject = {
          type: "dynamic-tool",
          toolName: call.function.name,
          toolCallId: call.id,
          state: "input-available",
          input: parseJsonOr(call.function.arguments, call.function.arguments),
        };
        byCall.set(call.id, part);
        parts.push(part);
      }
    } else if (r.role === "tool") {
      const part = r.toolCallId === null ? undefined : byCall.get(r.toolCallId);
      const text = rowText(r);
      if (part !== undefined) {
        part.state = "output-available";
        part.output = parseJsonOr(text, text);
      }
    }
  }
  if (parts.length === 0 && row.role === "tool") return { message: null, rows: n };
  return { message: { id, role: "assistant", parts: parts as UIMessage["parts"] }, rows: n };
}

function mediaTypeOf(url: string, kind: string): string {
  const m = /^data:([^;,]+)/u.exec(url);
  if (m !== null) return m[1]!;
  return kind === "image_url" ? "image/*" : "application/octet-stream";
}
