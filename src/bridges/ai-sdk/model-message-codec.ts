/**
 * AI SDK `ModelMessage`s (what `streamText`/`generateText` take and return in
 * `response.messages`) to Threadline messages and back.
 *
 * - `system`, `user`: one row; text parts as text content parts, images as `image_url`, files
 *   as `file` (binary data as a base64 data URL);
 * - `assistant`: one row (text as content, reasoning as `reasoning`, tool calls as
 *   `toolCalls`), followed by a `tool` row per provider-executed tool result it holds;
 * - `tool`: one `tool` row per tool result (`toolCallId`, `toolName`, the output as text:
 *   a string as is, JSON as JSON text, a denial as a sentence).
 *
 * The rest (provider options, output types, approvals, how binary data was given) is the
 * envelope in the first row's `reasoningDetails` (see stored-rows.ts); rows without one are
 * read naturally. A stored attachment (a photo or voice note a gateway kept) has no bytes here:
 * it is read as its text placeholder (`[image: image/jpeg, 200 KB]`), which any model takes.
 *
 * @module
 */
import type { ModelMessage } from "ai";
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

/** `Envelope.format` of a model message. */
export const MODEL_MESSAGE_FORMAT = "threadline.ai-sdk.model-message";

type Part = JsonObject & { type: string };

/** The rows of one model message, in order, all with `timestamp`. */
export function modelMessageToRows(message: ModelMessage, timestamp: number): NewMessage[] {
  const role = message.role;
  if (role !== "system" && role !== "user" && role !== "assistant" && role !== "tool") {
    throw new InvalidInputError(`role "${String(role)}" is not a model message role (system, user, assistant, tool).`, { field: "role" });
  }
  const head: NewMessage = { role, timestamp };
  const content: ContentPart[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  const results: NewMessage[] = [];
  const placed: PlacedPart[] = [];
  const parts: Part[] = typeof message.content === "string" ? [] : (message.content as unknown as Part[]);
  if (typeof message.content === "string") content.push({ type: "text", text: message.content });
  for (const part of parts) {
    if (part.type === "text" && typeof part.text === "string" && role !== "tool") {
      content.push({ type: "text", text: part.text });
      placed.push({ part: without(part, "text"), row: 0, content: content.length - 1 });
    } else if ((part.type === "image" || part.type === "file") && role !== "tool") {
      const field = part.type === "image" ? "image" : "data";
      const { url, data } = dataUrl(part[field], part.mediaType as string | undefined);
      content.push(
        part.type === "image"
          ? { type: "image_url", image_url: { url } }
          : { type: "file", file: { file_data: url, ...(typeof part.filename === "string" ? { filename: part.filename } : {}) } },
      );
      placed.push({ part: without(part, field, "filename"), row: 0, content: content.length - 1, data });
    } else if (part.type === "reasoning" && typeof part.text === "string" && role === "assistant") {
      reasoning.push(part.text);
      placed.push({ part: without(part, "text"), row: 0, reasoning: part.text.length });
    } else if (part.type === "tool-call" && typeof part.toolCallId === "string" && role === "assistant") {
      const hasInput = part.input !== undefined;
      toolCalls.push({
        id: part.toolCallId,
        type: "function",
        function: { name: String(part.toolName), arguments: hasInput ? JSON.stringify(part.input) : "" },
      });
      placed.push({ part: without(part, "toolCallId", "toolName", "input"), row: 0, call: part.toolCallId, input: hasInput ? "json" : "absent" });
    } else if (part.type === "tool-result" && typeof part.toolCallId === "string") {
      const output = part.output as JsonObject | undefined;
      const stored = outputText(output);
      results.push({ role: "tool", toolCallId: part.toolCallId, toolName: String(part.toolName), content: stored.text, timestamp });
      const row = (role === "tool" ? 0 : 1) + results.length - 1;
      const rest = without(part, "toolCallId", "toolName");
      if (stored.moved) rest.output = without(output!, "value");
      placed.push({ part: rest, row, call: part.toolCallId, output: stored.moved ? stored.encoding : "kept" });
    } else {
      placed.push({ part: jsonCopy(part) });
    }
  }
  const rows: NewMessage[] = [];
  if (role === "tool" && results.length > 0) {
    rows.push(...results);
  } else {
    head.content = storedContent(content);
    if (reasoning.length > 0) head.reasoning = reasoning.join("\n");
    if (toolCalls.length > 0) head.toolCalls = toolCalls;
    rows.push(head, ...results);
  }
  const envelope: Envelope = { format: MODEL_MESSAGE_FORMAT, version: 1, rows: rows.length, parts: placed };
  const rest = without(message, "role", "content");
  if (typeof message.content === "string") rest.stringContent = true;
  if (Object.keys(rest).length > 0) envelope.message = jsonCopy(rest);
  rows[0]!.reasoningDetails = envelope;
  return rows;
}

/** A tool output as the text of its row; `moved`: the row holds `value` (else the envelope keeps the whole output). */
function outputText(output: JsonObject | undefined): { text: string | null; moved: boolean; encoding: string } {
  switch (output?.type) {
    case "text":
    case "error-text":
      if (typeof output.value === "string") return { text: output.value, moved: true, encoding: "text" };
      break;
    case "json":
    case "error-json":
      if (output.value !== undefined) return { text: JSON.stringify(output.value), moved: true, encoding: "json" };
      break;
    case "execution-denied":
      return {
        text: typeof output.reason === "string" && output.reason !== "" ? `Tool call denied: ${output.reason}` : "Tool call denied.",
        moved: false,
        encoding: "",
      };
    case "content": {
      const value = Array.isArray(output.value) ? (output.value as Part[]) : [];
      const text = value.flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : [`[${p.type}]`])).join("\n");
      return { text, moved: false, encoding: "" };
    }
  }
  return { text: output === undefined ? null : JSON.stringify(output), moved: false, encoding: "" };
}

/**
 * File or image data as a URL for the content part, and how it was given: `string` (a URL
 * or data URL, kept as is), `base64` (wrapped in a data URL), `url` (a `URL` object),
 * `bytes` (a `Uint8Array`/`ArrayBuffer`, stored as base64; loaded back as a `Uint8Array`).
 */
function dataUrl(value: unknown, mediaType: string | undefined): { url: string; data: string } {
  const type = mediaType ?? "application/octet-stream";
  if (value instanceof URL) return { url: value.href, data: "url" };
  if (typeof value === "string") {
    if (/^[a-z][a-z0-9+.-]*:/iu.test(value)) return { url: value, data: "string" };
    return { url: `data:${type};base64,${value}`, data: "base64" };
  }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : value;
    return { url: `data:${type};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`, data: "bytes" };
  }
  throw new InvalidInputError("File and image data must be a string, a URL, a Uint8Array or an ArrayBuffer; encode other data first.", { field: "data" });
}

function dataFromUrl(url: string, how: string | undefined): unknown {
  const base64 = (): string => url.slice(url.indexOf(",") + 1);
  if (how === "url") return new URL(url);
  if (how === "base64") return base64();
  if (how === "bytes") return new Uint8Array(Buffer.from(base64(), "base64"));
  return url;
}

/** Model messages from stored rows (visible, in transcript order). */
export function rowsToModelMessages(rows: readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let i = 0;
  while (i < rows.length) {
    const envelope = envelopeOf(rows[i]!, MODEL_MESSAGE_FORMAT);
    if (envelope !== null && i + envelope.rows <= rows.length) {
      try {
        out.push(decodeEnvelope(envelope, rows.slice(i, i + envelope.rows)));
        i += envelope.rows;
        continue;
      } catch (error) {
        if (!(error instanceof EnvelopeMismatch)) throw error;
      }
    }
    const taken = naturalMessage(rows, i);
    out.push(taken.message);
    i += taken.rows;
  }
  return out;
}

function decodeEnvelope(envelope: Envelope, rows: Message[]): ModelMessage {
  const first = rows[0]!;
  const rest = { ...(envelope.message ?? {}) };
  const stringContent = rest.stringContent === true;
  delete rest.stringContent;
  if (stringContent) {
    if (typeof first.content !== "string") throw new EnvelopeMismatch("string content");
    return { ...jsonCopy(rest), role: first.role, content: first.content } as ModelMessage;
  }
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
      else {
        const url =
          cp.type === "image_url"
            ? expect((cp.image_url as { url?: string } | undefined)?.url, "image url")
            : expect((cp.file as { file_data?: string } | undefined)?.file_data, "file data");
        const filename = (cp.file as { filename?: string } | undefined)?.filename;
        parts.push({
          ...jsonCopy(p.part),
          [type === "image" ? "image" : "data"]: dataFromUrl(url, p.data),
          ...(filename === undefined ? {} : { filename }),
        });
      }
    } else if (p.reasoning !== undefined) {
      const at = reasoningAt.get(p.row) ?? 0;
      parts.push({ ...jsonCopy(p.part), text: expect(row.reasoning, "reasoning").slice(at, at + p.reasoning) });
      reasoningAt.set(p.row, at + p.reasoning + 1);
    } else if (p.call !== undefined && type === "tool-call") {
      const call = expect(
        row.toolCalls?.find((c) => c.id === p.call),
        "tool call",
      );
      const part: JsonObject = { ...jsonCopy(p.part), toolCallId: call.id, toolName: call.function.name };
      if (p.input === "json") part.input = parseJsonOr(call.function.arguments, undefined);
      parts.push(part);
    } else if (p.call !== undefined && type === "tool-result") {
      if (row.role !== "tool" || row.toolCallId !== p.call) throw new EnvelopeMismatch("tool result row");
      const part: JsonObject = { ...jsonCopy(p.part), toolCallId: p.call, toolName: expect(row.toolName, "tool name") };
      if (p.output === "text" || p.output === "json") {
        const text = expect(row.content as string | null, "output");
        const output = { ...(part.output as JsonObject) };
        output.value = p.output === "text" ? text : (JSON.parse(text) as unknown);
        part.output = output;
      }
      parts.push(part);
    } else {
      throw new EnvelopeMismatch("placement");
    }
  }
  return { ...jsonCopy(rest), role: first.role, content: parts } as ModelMessage;
}

/** A model message from rows without an envelope: one row, or a run of tool rows as one tool message. */
function naturalMessage(rows: readonly Message[], start: number): { message: ModelMessage; rows: number } {
  const row = rows[start]!;
  if (row.role === "tool") {
    const content: JsonObject[] = [];
    let i = start;
    for (; i < rows.length && rows[i]!.role === "tool" && envelopeOf(rows[i]!, MODEL_MESSAGE_FORMAT) === null; i++) {
      const r = rows[i]!;
      content.push({
        type: "tool-result",
        toolCallId: r.toolCallId ?? "",
        toolName: r.toolName ?? "",
        output: { type: "text", value: rowText(r) },
      });
    }
    return { message: { role: "tool", content } as ModelMessage, rows: Math.max(1, i - start) };
  }
  if (row.role === "system" || row.role === "developer") return { message: { role: "system", content: rowText(row) }, rows: 1 };
  if (row.role === "user") {
    if (typeof row.content === "string" || row.content === null) return { message: { role: "user", content: row.content ?? "" }, rows: 1 };
    const content: JsonObject[] = [];
    for (const cp of row.content) {
      if (cp.type === "text" && typeof cp.text === "string") content.push({ type: "text", text: cp.text });
      else if (cp.type === "image_url" && typeof (cp.image_url as { url?: unknown } | undefined)?.url === "string") {
        content.push({ type: "image", image: (cp.image_url as { url: string }).url });
      } else if (isAttachmentPart(cp)) content.push({ type: "text", text: attachmentPlaceholder(cp.attachment) });
    }
    return { message: { role: "user", content } as unknown as ModelMessage, rows: 1 };
  }
  const content: JsonObject[] = [];
  if (row.reasoning) content.push({ type: "reasoning", text: row.reasoning });
  const text = rowText(row);
  if (text !== "") content.push({ type: "text", text });
  for (const call of row.toolCalls ?? []) {
    content.push({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.function.name,
      input: parseJsonOr(call.function.arguments, call.function.arguments),
    });
  }
  return { message: { role: "assistant", content } as ModelMessage, rows: 1 };
}
