/**
 * One hermes-agent session as a Threadline export record (`threadline.session` version 1):
 * what maps to what, and what cannot be kept and why. Pure: no I/O.
 *
 * Mapping: ids are kept (a hermes id our id rules refuse is replaced by `hermes_<hash>`, see
 * {@link threadlineSessionId}); `active = 0` rows (hidden by a rewind, or archived by a
 * compaction) become rewound messages: kept, hidden from every read unless asked for;
 * multimodal content (hermes stores it as `\0json:` + JSON) becomes content parts; token and
 * cost totals, model, system prompt, user, chat, thread and session key are kept as they are.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  checkId,
  InvalidInputError,
  MAX_TITLE_CODE_POINTS,
  normalizeMessage,
  RECORD_FORMAT,
  RECORD_VERSION,
  sanitizeTitle,
  type NewMessage,
  type SessionRecord,
} from "../store/index.js";
import type { HermesMessageRow, HermesSessionRow } from "./hermes-state-file.js";

/** A message that was left out, and why. */
export interface SkippedMessage {
  /** The message's row id in the hermes file. */
  hermesMessageId: number;
  reason: string;
}

/** A session converted: the record to import, what was changed on the way, what was left out. */
export interface ConvertedSession {
  record: SessionRecord;
  /** Changes made to fit Threadline's rules (a title shortened, an id replaced, …), one sentence each. */
  notes: string[];
  /** Messages left out (an unknown role, content Threadline refuses), with the reason. */
  skippedMessages: SkippedMessage[];
  /** Messages in the record: all, and the rewound (hidden) ones among them. */
  messages: number;
  rewound: number;
}

/** hermes-agent writes structured content as one of these prefixes followed by JSON. */
const CONTENT_JSON_PREFIXES = ["\u0000json:", "\u0001json:"];

/**
 * The Threadline id of a hermes session id: the same id when our id rules accept it (1–256
 * characters, no control characters), else `hermes_` + the first 24 hex digits of the SHA-256
 * of the id (so the same hermes id always maps to the same Threadline id).
 */
export function threadlineSessionId(hermesId: string): string {
  try {
    return checkId(hermesId, "id");
  } catch {
    return `hermes_${createHash("sha256").update(hermesId, "utf8").digest("hex").slice(0, 24)}`;
  }
}

/** Converts one session and its messages (in the order they were written). */
export function convertHermesSession(row: HermesSessionRow, rows: HermesMessageRow[]): ConvertedSession {
  const notes: string[] = [];
  const id = threadlineSessionId(String(row.id));
  if (id !== row.id) notes.push(`the hermes id ${JSON.stringify(row.id)} is not a valid Threadline id; imported as ${id}`);
  const parentId = row.parent_session_id === null || row.parent_session_id === "" ? null : threadlineSessionId(String(row.parent_session_id));

  let source = typeof row.source === "string" ? row.source.trim() : "";
  if (source === "" || !isValidId(source)) {
    notes.push(`the source ${JSON.stringify(row.source)} is not usable; imported as "hermes"`);
    source = "hermes";
  }
  const startedAt = row.started_at;
  if (typeof startedAt !== "number" || !Number.isFinite(startedAt) || startedAt < 0) {
    throw new InvalidInputError(`started_at is ${JSON.stringify(startedAt)}, not a time in seconds; the session cannot be placed in time`);
  }
  const endedAt = finiteOrNull(row.ended_at);
  if (endedAt === null && row.end_reason) {
    notes.push(`end reason "${row.end_reason}" has no end time in hermes; Threadline keeps end reasons only for ended sessions, so it was dropped`);
  }

  let modelConfig: Record<string, unknown> | null = null;
  if (row.model_config !== null && row.model_config !== "") {
    const parsed = parseJson(row.model_config);
    if (parsed.ok && parsed.value !== null && typeof parsed.value === "object" && !Array.isArray(parsed.value)) {
      modelConfig = parsed.value as Record<string, unknown>;
    } else {
      notes.push("model_config is not a JSON object; left out");
    }
  }

  const title = importTitle(row.title, notes);
  const { messages, skippedMessages, rewound } = convertMessages(rows, notes);

  const record: SessionRecord = {
    format: RECORD_FORMAT,
    version: RECORD_VERSION,
    session: {
      id,
      source,
      userId: textOrNull(row.user_id),
      model: textOrNull(row.model),
      modelConfig,
      systemPrompt: textOrNull(row.system_prompt),
      parentSessionId: parentId,
      startedAt,
      endedAt,
      endReason: endedAt === null ? null : textOrNull(row.end_reason),
      title,
      sessionKey: textOrNull(row.session_key),
      chatId: textOrNull(row.chat_id),
      chatType: textOrNull(row.chat_type),
      threadId: textOrNull(row.thread_id),
      usage: {
        inputTokens: count(row.input_tokens),
        outputTokens: count(row.output_tokens),
        cacheReadTokens: count(row.cache_read_tokens),
        cacheWriteTokens: count(row.cache_write_tokens),
        reasoningTokens: count(row.reasoning_tokens),
        apiCalls: count(row.api_call_count),
        estimatedCostUsd: finiteOrNull(row.estimated_cost_usd) ?? 0,
        actualCostUsd: finiteOrNull(row.actual_cost_usd),
        billingProvider: textOrNull(row.billing_provider),
        billingMode: textOrNull(row.billing_mode),
        costStatus: textOrNull(row.cost_status),
      },
    },
    messages,
  };
  return { record, notes, skippedMessages, messages: messages.length, rewound };
}

/** The title as Threadline keeps it: sanitised, and cut to the length limit (said in a note) rather than lost. */
function importTitle(raw: string | null, notes: string[]): string | null {
  if (raw === null) return null;
  const text = String(raw);
  try {
    const clean = sanitizeTitle(text);
    if (clean !== text && clean !== null) notes.push(`title ${JSON.stringify(text)} sanitised to ${JSON.stringify(clean)}`);
    if (clean === null && text !== "") notes.push(`title ${JSON.stringify(text)} is empty once sanitised; imported without a title`);
    return clean;
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const cut = sanitizeTitle([...(sanitizeTitle(text.slice(0, 4 * MAX_TITLE_CODE_POINTS)) ?? "")].slice(0, MAX_TITLE_CODE_POINTS).join(""));
    notes.push(`title is longer than ${MAX_TITLE_CODE_POINTS} characters; shortened to ${JSON.stringify(cut)}`);
    return cut;
  }
}

function convertMessages(
  rows: HermesMessageRow[],
  notes: string[],
): { messages: SessionRecord["messages"]; skippedMessages: SkippedMessage[]; rewound: number } {
  const messages: SessionRecord["messages"] = [];
  const skippedMessages: SkippedMessage[] = [];
  let rewound = 0;
  let codexItems = 0;
  let compacted = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row.codex_reasoning_items || row.codex_message_items) codexItems += 1;
    const hidden = row.active === 0;
    if (hidden && row.compacted === 1) compacted += 1;
    try {
      const message = convertMessage(row);
      const normalized = normalizeMessage(message, `message ${row.id}`);
      // A run of hidden rows is one rewind: it happened after the last of them was written.
      let rewoundAt: number | null = null;
      if (hidden) {
        let last = i;
        while (last + 1 < rows.length && rows[last + 1]!.active === 0) last += 1;
        rewoundAt = finiteOrNull(rows[last]!.timestamp) ?? normalized.timestamp;
        rewound += 1;
      }
      messages.push({ ...normalized, rewoundAt });
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      skippedMessages.push({ hermesMessageId: row.id, reason: error.message });
    }
  }
  if (codexItems > 0) {
    notes.push(
      `${codexItems} message${codexItems === 1 ? "" : "s"} carried Codex reasoning/message items, which Threadline has no field for; those items were left out (the messages were imported)`,
    );
  }
  if (compacted > 0) {
    notes.push(`${compacted} message${compacted === 1 ? " was" : "s were"} archived by a hermes compaction; imported as rewound (hidden) messages`);
  }
  return { messages, skippedMessages, rewound };
}

/** One row as a message to validate; throws {@link InvalidInputError} when it cannot be one. */
function convertMessage(row: HermesMessageRow): NewMessage {
  const timestamp = finiteOrNull(row.timestamp);
  if (timestamp === null || timestamp < 0) throw new InvalidInputError(`timestamp ${JSON.stringify(row.timestamp)} is not a time in seconds`);
  const message: NewMessage = {
    role: row.role as NewMessage["role"],
    content: convertContent(row.content),
    toolCalls: convertToolCalls(row.tool_calls),
    toolCallId: textOrNull(row.tool_call_id),
    toolName: textOrNull(row.tool_name),
    tokenCount: Number.isInteger(row.token_count) && (row.token_count as number) >= 0 ? row.token_count : null,
    finishReason: textOrNull(row.finish_reason),
    reasoning: textOrNull(row.reasoning) ?? textOrNull(row.reasoning_content),
    platformMessageId: row.platform_message_id === null || row.platform_message_id === "" ? null : String(row.platform_message_id),
    timestamp,
  };
  if (row.reasoning_details !== null && row.reasoning_details !== "") {
    const parsed = parseJson(row.reasoning_details);
    message.reasoningDetails = parsed.ok ? parsed.value : row.reasoning_details;
  }
  return message;
}

function convertContent(content: string | null): NewMessage["content"] {
  if (content === null) return null;
  const text = String(content);
  const prefix = CONTENT_JSON_PREFIXES.find((p) => text.startsWith(p));
  if (prefix === undefined) return text;
  const parsed = parseJson(text.slice(prefix.length));
  if (!parsed.ok) throw new InvalidInputError(`its content is marked as JSON but is not valid JSON (${parsed.error})`);
  const value = parsed.value;
  if (value === null || typeof value === "string") return value;
  if (Array.isArray(value)) {
    // Bare strings in a part list are text parts.
    return value.map((part: unknown) => (typeof part === "string" ? { type: "text", text: part } : part)) as NewMessage["content"];
  }
  if (typeof value === "object" && typeof (value as { type?: unknown }).type === "string") return [value] as NewMessage["content"];
  return JSON.stringify(value);
}

/** hermes stores OpenAI-style tool calls as JSON; a flat `{ id, name, arguments }` is accepted too. */
function convertToolCalls(raw: string | null): NewMessage["toolCalls"] {
  if (raw === null || raw === "") return null;
  const parsed = parseJson(raw);
  if (!parsed.ok) throw new InvalidInputError(`its tool_calls are not valid JSON (${parsed.error})`);
  const value = parsed.value;
  if (value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  return list.map((call: unknown, i) => {
    if (call === null || typeof call !== "object") throw new InvalidInputError(`tool call ${i} is not an object`);
    const c = call as Record<string, unknown>;
    const fn = (c["function"] ?? null) as Record<string, unknown> | null;
    const name = fn !== null && typeof fn === "object" ? fn["name"] : c["name"];
    const args = fn !== null && typeof fn === "object" ? fn["arguments"] : c["arguments"];
    if (typeof name !== "string") throw new InvalidInputError(`tool call ${i} has no function name`);
    const argumentsText = typeof args === "string" ? args : args === undefined || args === null ? "{}" : JSON.stringify(args);
    const rest = fn !== null && typeof fn === "object" ? c : {};
    return {
      ...rest,
      id: typeof c["id"] === "string" ? c["id"] : typeof c["call_id"] === "string" ? (c["call_id"] as string) : `call_${i}`,
      type: typeof c["type"] === "string" ? (c["type"] as string) : "function",
      function: { ...(fn ?? {}), name, arguments: argumentsText },
    };
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

function isValidId(value: string): boolean {
  try {
    checkId(value, "source");
    return true;
  } catch {
    return false;
  }
}

function textOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = String(value);
  return text === "" ? null : text;
}

function finiteOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}
