/**
 * The export/import format: one JSON line per session, `{ format, version,
 * session, messages }`. Shared by every backend; validated record by record.
 *
 * @module
 */
import { z } from "zod";
import type { Message, Session, SessionRecord } from "./contract.js";
import { InvalidInputError } from "./errors.js";
import { checkNewSession, normalizeMessage, type NormalizedMessage } from "./input-validation.js";
import { recordMediaSchema } from "./record-media.js";
import { sanitizeTitle } from "./titles.js";

/** The `format` tag of a record. */
export const RECORD_FORMAT = "threadline.session";
/** The record version this code writes and reads. */
export const RECORD_VERSION = 1;

/** A message of an export record: a {@link Message} without its `id` and `sessionId`. */
export type ExportedMessage = SessionRecord["messages"][number];

/** A session and its exported messages as an export record (derived counters left out: they are recomputed on import). */
export function toSessionRecord(session: Session, messages: ExportedMessage[]): SessionRecord {
  const { messageCount: _m, toolCallCount: _t, lastActiveAt: _l, preview: _p, ...rest } = session;
  return { format: RECORD_FORMAT, version: RECORD_VERSION, session: rest, messages };
}

const nullableText = z.string().nullable().optional();
const nullableNumber = z.number().nullable().optional();

const recordSchema = z.object({
  format: z.literal(RECORD_FORMAT),
  version: z.literal(RECORD_VERSION),
  session: z.object({
    id: z.string().min(1),
    source: z.string().min(1),
    userId: nullableText,
    model: nullableText,
    modelConfig: z.record(z.string(), z.unknown()).nullable().optional(),
    systemPrompt: nullableText,
    parentSessionId: nullableText,
    startedAt: z.number(),
    endedAt: nullableNumber,
    endReason: nullableText,
    title: nullableText,
    sessionKey: nullableText,
    chatId: nullableText,
    chatType: nullableText,
    threadId: nullableText,
    usage: z
      .object({
        inputTokens: z.number().optional(),
        outputTokens: z.number().optional(),
        cacheReadTokens: z.number().optional(),
        cacheWriteTokens: z.number().optional(),
        reasoningTokens: z.number().optional(),
        apiCalls: z.number().optional(),
        estimatedCostUsd: z.number().optional(),
        actualCostUsd: nullableNumber,
        billingProvider: nullableText,
        billingMode: nullableText,
        costStatus: nullableText,
      })
      .optional(),
  }),
  messages: z.array(z.record(z.string(), z.unknown())),
  media: z.array(recordMediaSchema).optional(),
});

/** A record that passed validation, its messages normalised. */
export interface ValidRecord {
  session: z.infer<typeof recordSchema>["session"] & { title: string | null };
  messages: Array<{ message: NormalizedMessage; rewoundAt: number | null }>;
  /** The record's media entries (empty when it has none). */
  media: z.infer<typeof recordMediaSchema>[];
}

/** Parses and validates one line; throws {@link InvalidInputError} saying what is wrong. */
export function parseSessionRecord(line: string): ValidRecord {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (cause) {
    throw new InvalidInputError(`not valid JSON (${(cause as Error).message})`, { cause });
  }
  const result = recordSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.length ? issue.path.join(".") : "record";
    throw new InvalidInputError(`${path}: ${issue.message} (expected a "${RECORD_FORMAT}" version ${RECORD_VERSION} record)`);
  }
  const { session, messages, media = [] } = result.data;
  checkNewSession({ ...session, title: null } as Parameters<typeof checkNewSession>[0]);
  const title = sanitizeTitle(session.title ?? null);
  const normalized = messages.map((raw, i) => {
    const rewoundAt = raw["rewoundAt"];
    if (rewoundAt !== undefined && rewoundAt !== null && (typeof rewoundAt !== "number" || !Number.isFinite(rewoundAt))) {
      throw new InvalidInputError(`messages[${i}].rewoundAt must be a number or null`);
    }
    return {
      message: normalizeMessage(raw as never, `messages[${i}]`),
      rewoundAt: (rewoundAt as number | null | undefined) ?? null,
    };
  });
  return { session: { ...session, title }, messages: normalized, media };
}
