/**
 * LangChain messages to Threadline messages and back, one row per message.
 *
 * Natural fields: `HumanMessage` → `user`, `AIMessage` → `assistant` (its `tool_calls` as
 * OpenAI-style `toolCalls`, `arguments` = `args` as JSON; `additional_kwargs.reasoning_content`
 * as `reasoning`), `SystemMessage` → `system`, `ToolMessage` → `tool` (`tool_call_id` as
 * `toolCallId`, `name` as `toolName`); content as given (a string, or the content blocks as
 * content parts). A `ChatMessage` with another role, and a `FunctionMessage`, are stored as the
 * nearest role.
 *
 * The rest of the message's serialised form (`toDict()`: its type, id, name,
 * `additional_kwargs`, `response_metadata`, `usage_metadata`, `invalid_tool_calls`, a tool
 * message's `artifact` and `status`, …) goes into an envelope in `reasoningDetails`: the one
 * per-message field that takes any JSON and that Threadline never indexes, shows as text or
 * sends to a model. It holds no copy of the content, tool calls or reasoning. Loading rebuilds
 * the message with LangChain's own `mapStoredMessagesToChatMessages`; rows without an envelope
 * (the gateway's, another bridge's) are read naturally.
 *
 * @module
 */
import type { BaseMessage, StoredMessage } from "@langchain/core/messages";
import { withAttachmentPlaceholders } from "../../context/internal.js";
import { InvalidInputError, type ContentPart, type Message, type MessageRole, type NewMessage, type ToolCall } from "../../store/index.js";

/** `format` of the envelope in `reasoningDetails`. */
export const LANGCHAIN_MESSAGE_FORMAT = "threadline.langchain.message";

type JsonObject = Record<string, unknown>;

interface LangchainEnvelope {
  format: typeof LANGCHAIN_MESSAGE_FORMAT;
  version: 1;
  /** `StoredMessage.type`: human, ai, system, tool, generic, function, … */
  type: string;
  /** `StoredMessage.data` without the fields kept in natural columns. */
  data: JsonObject;
  /** Per tool call, its fields other than id, name and args (and whether it had no id). */
  calls?: Array<JsonObject & { "@noId"?: true }>;
  /** The content was absent (not a string or array). */
  noContent?: true;
}

const ROLE_OF_TYPE: Record<string, MessageRole> = { human: "user", ai: "assistant", system: "system", tool: "tool", function: "tool", developer: "developer" };
const ROLE_OF_GENERIC: Record<string, MessageRole> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  system: "system",
  developer: "developer",
  tool: "tool",
};

/** The row of one LangChain message (its `toDict()` form). */
export function langchainMessageToRow(stored: StoredMessage, timestamp: number): NewMessage {
  const type = stored.type;
  const data: JsonObject = { ...(stored.data as unknown as JsonObject) };
  const role: MessageRole = type === "generic" ? (ROLE_OF_GENERIC[String(data.role).toLowerCase()] ?? "user") : (ROLE_OF_TYPE[type] ?? "user");
  const row: NewMessage = { role, timestamp };
  const envelope: LangchainEnvelope = { format: LANGCHAIN_MESSAGE_FORMAT, version: 1, type, data };

  const content = data.content;
  if (typeof content === "string") row.content = content;
  else if (Array.isArray(content)) row.content = content as ContentPart[];
  else envelope.noContent = true;
  if (typeof content === "string" || Array.isArray(content)) delete data.content;

  if (Array.isArray(data.tool_calls) && data.tool_calls.length > 0) {
    const calls: LangchainEnvelope["calls"] = [];
    row.toolCalls = (data.tool_calls as JsonObject[]).map((tc) => {
      const { id, name, args, ...rest } = tc;
      calls.push(typeof id === "string" ? rest : { ...rest, "@noId": true });
      const call: ToolCall = {
        id: typeof id === "string" ? id : "",
        type: "function",
        function: { name: String(name), arguments: JSON.stringify(args ?? {}) },
      };
      return call;
    });
    envelope.calls = calls;
    delete data.tool_calls;
  }
  if ((type === "tool" || type === "function") && typeof data.name === "string") {
    row.toolName = data.name;
    delete data.name;
  }
  if (type === "tool" && typeof data.tool_call_id === "string") {
    row.toolCallId = data.tool_call_id;
    delete data.tool_call_id;
  }
  const kwargs = data.additional_kwargs as JsonObject | undefined;
  if (kwargs !== undefined && typeof kwargs.reasoning_content === "string") {
    row.reasoning = kwargs.reasoning_content;
    const { reasoning_content: _moved, ...rest } = kwargs;
    data.additional_kwargs = { ...rest, "@reasoning": true };
  }
  row.reasoningDetails = envelope;
  return row;
}

/** The `StoredMessage` form of a row (for `mapStoredMessagesToChatMessages`). */
export function rowToStoredMessage(row: Message): StoredMessage {
  const envelope = envelopeOf(row);
  if (envelope === null) return naturalStoredMessage(row);
  const data: JsonObject = JSON.parse(JSON.stringify(envelope.data)) as JsonObject;
  if (!envelope.noContent) data.content = row.content ?? "";
  if (envelope.calls !== undefined) {
    const calls = row.toolCalls ?? [];
    data.tool_calls = calls.map((c, i) => {
      const { "@noId": noId, ...rest } = envelope.calls?.[i] ?? {};
      return { ...rest, ...(noId === true ? {} : { id: c.id }), name: c.function.name, args: parseArgs(c.function.arguments) };
    });
  }
  if ((envelope.type === "tool" || envelope.type === "function") && row.toolName !== null) data.name = row.toolName;
  if (envelope.type === "tool" && row.toolCallId !== null) data.tool_call_id = row.toolCallId;
  const kwargs = data.additional_kwargs as JsonObject | undefined;
  if (kwargs?.["@reasoning"] === true) {
    delete kwargs["@reasoning"];
    kwargs.reasoning_content = row.reasoning ?? "";
  }
  return { type: envelope.type, data: data as unknown as StoredMessage["data"] };
}

function envelopeOf(row: Message): LangchainEnvelope | null {
  const d = row.reasoningDetails as Partial<LangchainEnvelope> | null;
  if (d === null || typeof d !== "object" || d.format !== LANGCHAIN_MESSAGE_FORMAT || d.version !== 1) return null;
  if (typeof d.type !== "string" || d.data === null || typeof d.data !== "object") return null;
  return d as LangchainEnvelope;
}

/** A row without an envelope, as LangChain would have stored it (a stored attachment part, which no model knows, as its text placeholder). */
function naturalStoredMessage(row: Message): StoredMessage {
  const content = withAttachmentPlaceholders(row.content ?? "");
  const base = { content, additional_kwargs: row.reasoning ? { reasoning_content: row.reasoning } : {}, response_metadata: {} };
  switch (row.role) {
    case "assistant":
      return {
        type: "ai",
        data: {
          ...base,
          tool_calls: (row.toolCalls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: "tool_call" })),
        } as unknown as StoredMessage["data"],
      };
    case "tool":
      return {
        type: "tool",
        data: { ...base, tool_call_id: row.toolCallId ?? "", ...(row.toolName === null ? {} : { name: row.toolName }) } as StoredMessage["data"],
      };
    case "system":
    case "developer":
      return { type: "system", data: base as StoredMessage["data"] };
    default:
      return { type: "human", data: base as StoredMessage["data"] };
  }
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The `toDict()` of a message, checked to be one. */
export function storedFormOf(message: BaseMessage, field: string): StoredMessage {
  if (message === null || typeof message !== "object" || typeof (message as { toDict?: unknown }).toDict !== "function") {
    throw new InvalidInputError(`${field} is not a LangChain message (no toDict()); pass BaseMessage instances.`, { field });
  }
  return message.toDict();
}
