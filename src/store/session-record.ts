/**
 * The parser of the export/import format (see record-format.ts): one JSON line per session,
 * `{ format, version, session, messages }`, validated record by record with zod. Loaded only
 * by an import (the store core loads its export/import methods with `import()`), so opening,
 * listing and reading sessions never load zod.
 *
 * @module
 */
import { z } from "zod";
import { InvalidInputError } from "./errors.js";
import { checkNewSession, normalizeMessage, type NormalizedMessage } from "./input-validation.js";
import { RECORD_FORMAT, RECORD_VERSION } from "./record-format.js";
import { SHA256 } from "./record-media.js";
import { sanitizeTitle } from "./titles.js";

export { RECORD_FORMAT, RECORD_VERSION } from "./record-format.js";

/** One entry of a record's `media`, as the schema of a record reads it. */
const recordMediaSchema = z.object({
  sha256: z.string().regex(SHA256, "must be 64 lower-case hex digits (a SHA-256)"),
  mimeType: z.string().min(1).max(255),
  size: z.number().int().nonnegative(),
  data: z.string().optional(),
});

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
