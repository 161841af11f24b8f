/**
 * OpenAI Agents SDK items (`AgentInputItem`) to stored messages and back.
 *
 * One item is one message. The common items are written in Threadline's own message shape,
 * so the CLI, search and the web page show them like any other session:
 *
 * | item | message |
 * | --- | --- |
 * | user / system / assistant message | that role; `input_text` / `output_text` parts become `text` parts |
 * | `function_call` | `assistant` with one `toolCalls` entry (`id` = `callId`) |
 * | `function_call_result` | `tool` with `toolCallId`, `toolName`; a string or text output as `content` |
 * | `reasoning` | `assistant` with no content; its text in `reasoning` |
 * | any other item (hosted tool calls, computer, shell, compaction, …) | `assistant` with no content |
 *
 * The rest of the item (its `type`, `id`, `status`, `providerData`, non-text outputs, …) is
 * kept in the message's `reasoningDetails` as `{ openaiAgents: { item, derived } }`: `item` is
 * the item without the fields listed in `derived`, which are rebuilt from the message's own
 * fields on the way back. Before writing, the item is rebuilt from what would be stored and
 * compared with the original; when they differ (a shape this mapping does not know), nothing
 * is derived and `item` is the whole item. So what the SDK stores is what it gets back.
 *
 * `reasoningDetails` holds this because it is the one free-form JSON field of a message: every
 * backend keeps it as given, through rewind, export and import; search does not index it, and
 * Threadline's own agent never sends it to a model. A dedicated column would need a schema
 * change on both backends for no gain.
 *
 * Messages not written by the bridge (a session started by the gateway or the CLI) have no
 * such record; they are read in the SDK's shapes from their fields (see {@link messageToItems}).
 *
 * @module
 */
import type { AgentInputItem } from "@openai/agents";
import { attachmentPlaceholder, isAttachmentPart } from "../../context/internal.js";
import { InvalidInputError, type ContentPart, type Message, type MessageContent, type MessageRole, type NewMessage, type ToolCall } from "../../store/index.js";

type JsonObject = Record<string, unknown>;

/** The record a bridge-written message keeps in `reasoningDetails`. */
interface ItemRecord {
  openaiAgents: { item: JsonObject; derived: string[] };
}

/** The message fields an item maps onto, and which item fields they stand for. */
interface Natural {
  message: NewMessage;
  derived: string[];
}

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Checks that an item is made of JSON values only (plain objects, arrays, strings, finite
 * numbers, booleans, `null`; `undefined` object properties are dropped as JSON drops them).
 */
function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new InvalidInputError(`${path} is ${value}; session items must be JSON values.`, { field: path });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((entry, i) => {
      if (entry === undefined) throw new InvalidInputError(`${path}[${i}] is undefined; session items must be JSON values.`, { field: `${path}[${i}]` });
      assertJson(entry, `${path}[${i}]`);
    });
    return;
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
      throw new InvalidInputError(`${path} is a ${kind}; session items must be JSON values (encode binary data as base64 or a data: URL).`, { field: path });
    }
    for (const [key, entry] of Object.entries(value)) {
      if (entry !== undefined) assertJson(entry, `${path}.${key}`);
    }
    return;
  }
  throw new InvalidInputError(`${path} is a ${typeof value}; session items must be JSON values.`, { field: path });
}

/** The JSON copy of a checked value (drops `undefined` properties). */
const jsonCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Deep equality of JSON values (key order ignored). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** Whether content parts are ones the store keeps as given (objects with a string `type`, `text` a string when present). */
function storableParts(parts: unknown[]): parts is ContentPart[] {
  return parts.every((p) => isObject(p) && typeof p.type === "string" && (p.text === undefined || typeof p.text === "string"));
}

/** Renames the part type `from` to `to`, keeping every other part and field as is. */
const renameParts = (parts: ContentPart[], from: string, to: string): ContentPart[] => parts.map((p) => (p.type === from ? { ...p, type: to } : p));

/** The texts of parts of type `type` with a string `text`. */
const textsOf = (parts: unknown, type: string): string[] =>
  Array.isArray(parts) ? parts.filter((p) => isObject(p) && p.type === type && typeof p.text === "string").map((p) => (p as { text: string }).text) : [];

/** The kind of an item: a message role, or its `type`. */
function kindOf(item: JsonObject): string {
  const role = item.role;
  if ((item.type === undefined || item.type === "message") && (role === "user" || role === "assistant" || role === "system")) return `message:${role}`;
  return typeof item.type === "string" ? item.type : "unknown";
}

/** The message an item maps onto, and the item fields it stands for. */
function naturalOf(item: JsonObject): Natural {
  const kind = kindOf(item);
  if (kind.startsWith("message:")) {
    const role = kind.slice("message:".length) as MessageRole;
    const content = item.content;
    if (typeof content === "string") return { message: { role, content }, derived: ["role", "content"] };
    if (Array.isArray(content) && storableParts(content)) {
      const own = role === "user" ? "input_text" : "output_text";
      return { message: { role, content: renameParts(content, own, "text") }, derived: ["role", "content"] };
    }
    return { message: { role, content: null }, derived: ["role"] };
  }
  if (kind === "function_call" && typeof item.callId === "string" && typeof item.name === "string" && typeof item.arguments === "string") {
    const call: ToolCall = { id: item.callId, type: "function", function: { name: item.name, arguments: item.arguments } };
    return { message: { role: "assistant", content: null, toolCalls: [call] }, derived: ["callId", "name", "arguments"] };
  }
  if (kind === "function_call_result" && typeof item.callId === "string" && typeof item.name === "string") {
    const message: NewMessage = { role: "tool", content: null, toolCallId: item.callId, toolName: item.name };
    const output = item.output;
    if (typeof output === "string") return { message: { ...message, content: output }, derived: ["callId", "name", "output"] };
    if (isObject(output) && output.type === "text" && typeof output.text === "string" && Object.keys(output).length === 2) {
      return { message: { ...message, content: [{ type: "text", text: output.text }] }, derived: ["callId", "name", "output"] };
    }
    // Structured output (images, files, several parts): kept whole; its texts are shown.
    const texts = [...textsOf(Array.isArray(output) ? output : [output], "input_text"), ...textsOf(Array.isArray(output) ? output : [output], "text")];
    return { message: { ...message, content: texts.length > 0 ? texts.join("\n") : null }, derived: ["callId", "name"] };
  }
  if (kind === "reasoning") {
    const raw = textsOf(item.rawContent, "reasoning_text");
    const summary = textsOf(item.content, "input_text");
    const texts = raw.length > 0 ? raw : summary;
    const reasoning = texts.length > 0 ? texts.join("\n") : null;
    const message: NewMessage = { role: "assistant", content: null, reasoning };
    const single = (parts: unknown, type: string): boolean =>
      Array.isArray(parts) && parts.length === 1 && isObject(parts[0]) && parts[0].type === type && Object.keys(parts[0]).length === 2;
    if (raw.length > 0 && single(item.rawContent, "reasoning_text")) return { message, derived: ["rawContent"] };
    if (raw.length === 0 && summary.length > 0 && single(item.content, "input_text")) return { message, derived: ["content"] };
    return { message, derived: [] };
  }
  return { message: { role: "assistant", content: null }, derived: [] };
}

/** The message fields a derived item field is rebuilt from. */
type MessageFields = Pick<Message, "role" | "content" | "toolCalls" | "toolCallId" | "toolName" | "reasoning">;

/** Rebuilds an item from its kept part and the message fields. */
function rebuild(kept: JsonObject, derived: readonly string[], m: MessageFields): JsonObject {
  const item: JsonObject = { ...kept };
  const kind = typeof kept.type === "string" && kept.type !== "message" ? kept.type : "message";
  for (const field of derived) {
    if (kind === "message") {
      if (field === "role") item.role = m.role;
      else if (field === "content") item.content = messageContent(m.content, m.role === "user" ? "input_text" : "output_text");
    } else if (kind === "function_call") {
      const call = m.toolCalls?.[0];
      if (field === "callId") item.callId = call?.id;
      else if (field === "name") item.name = call?.function.name;
      else if (field === "arguments") item.arguments = call?.function.arguments;
    } else if (kind === "function_call_result") {
      if (field === "callId") item.callId = m.toolCallId;
      else if (field === "name") item.name = m.toolName;
      else if (field === "output") item.output = Array.isArray(m.content) ? m.content[0] : m.content;
    } else if (kind === "reasoning") {
      if (field === "rawContent") item.rawContent = [{ type: "reasoning_text", text: m.reasoning ?? "" }];
      else if (field === "content") item.content = [{ type: "input_text", text: m.reasoning ?? "" }];
    }
  }
  return item;
}

const messageContent = (content: MessageContent, own: string): unknown => (Array.isArray(content) ? renameParts(content, "text", own) : content);

/** The fields of a new message as the store would return them (absent optional fields as `null`). */
function asStored(message: NewMessage): MessageFields {
  return {
    role: message.role,
    content: message.content ?? null,
    toolCalls: message.toolCalls && message.toolCalls.length > 0 ? message.toolCalls : null,
    toolCallId: message.toolCallId ?? null,
    toolName: message.toolName ?? null,
    reasoning: message.reasoning ?? null,
  };
}

/**
 * The message to store for an SDK item. Throws {@link InvalidInputError} (naming `field`) when
 * the item is not a JSON object with a `role` or a string `type`.
 */
export function itemToMessage(item: AgentInputItem, field = "item"): NewMessage {
  if (!isObject(item)) throw new InvalidInputError(`${field} must be an object (an Agents SDK item).`, { field });
  assertJson(item, field);
  const copy = jsonCopy(item) as JsonObject;
  if (typeof copy.type !== "string" && typeof copy.role !== "string") {
    throw new InvalidInputError(`${field} has neither a "type" nor a "role"; it is not an Agents SDK item.`, { field });
  }
  let { message, derived } = naturalOf(copy);
  let kept = Object.fromEntries(Object.entries(copy).filter(([key]) => !derived.includes(key)));
  if (!jsonEqual(rebuild(kept, derived, asStored(message)), copy)) {
    derived = [];
    kept = copy;
  }
  const record: ItemRecord = { openaiAgents: { item: kept, derived } };
  return { ...message, reasoningDetails: record };
}

/** The item record of a message written by the bridge, or `null`. */
function recordOf(message: Message): ItemRecord["openaiAgents"] | null {
  const details = message.reasoningDetails;
  if (!isObject(details) || !isObject(details.openaiAgents)) return null;
  const { item, derived } = details.openaiAgents;
  if (!isObject(item) || !Array.isArray(derived) || !derived.every((d) => typeof d === "string")) return null;
  return { item, derived: derived as string[] };
}

/**
 * The SDK items of a stored message: exactly the item the bridge stored, or, for a message
 * written by something else, its fields in the SDK's shapes (at least one item, in order):
 * a user or system message; for an assistant message its reasoning, its text and one
 * `function_call` per tool call; a `function_call_result` for a tool result.
 */
export function messageToItems(message: Message): AgentInputItem[] {
  const record = recordOf(message);
  if (record !== null) return [rebuild(record.item, record.derived, message) as unknown as AgentInputItem];
  return foreignItems(message) as unknown as AgentInputItem[];
}

/** A message written outside the bridge, in the SDK's item shapes. */
function foreignItems(m: Message): JsonObject[] {
  const text = (content: MessageContent): string =>
    typeof content === "string"
      ? content
      : (content ?? [])
          .filter((p) => p.type === "text" && typeof p.text === "string")
          .map((p) => p.text)
          .join("\n");
  switch (m.role) {
    case "user": {
      if (typeof m.content === "string" || m.content === null) return [{ type: "message", role: "user", content: m.content ?? "" }];
      const parts = m.content.flatMap((p): JsonObject[] => {
        if (p.type === "text" && typeof p.text === "string") return [{ type: "input_text", text: p.text }];
        const url = (p.image_url as { url?: unknown } | undefined)?.url;
        if (p.type === "image_url" && typeof url === "string") return [{ type: "input_image", image: url }];
        // A stored attachment (no bytes here): its text placeholder.
        if (isAttachmentPart(p)) return [{ type: "input_text", text: attachmentPlaceholder(p.attachment) }];
        return [];
      });
      return [{ type: "message", role: "user", content: parts }];
    }
    case "system":
    case "developer":
      return [{ type: "message", role: "system", content: text(m.content) }];
    case "tool":
      return [{ type: "function_call_result", callId: m.toolCallId ?? "", name: m.toolName ?? "", status: "completed", output: text(m.content) }];
    default: {
      const items: JsonObject[] = [];
      if (m.reasoning) items.push({ type: "reasoning", content: [], rawContent: [{ type: "reasoning_text", text: m.reasoning }] });
      const said = text(m.content);
      if (said !== "" || (m.toolCalls ?? []).length === 0) {
        items.push({ type: "message", role: "assistant", status: "completed", content: said === "" ? [] : [{ type: "output_text", text: said }] });
      }
      for (const call of m.toolCalls ?? []) {
        items.push({ type: "function_call", callId: call.id, name: call.function.name, arguments: call.function.arguments, status: "completed" });
      }
      return items;
    }
  }
}
