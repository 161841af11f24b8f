/**
 * `adapters.signal` (through the signal-cli REST API): its zod schema, `EXPECTED` lines,
 * resolved {@link SignalConfig}, {@link signalProblems} (what `chatAdapterProblems` reports
 * for it) and {@link SIGNAL_SECRET_KEYS} (none: the section holds no credentials).
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";

/** A phone number in E.164 form: `+`, the country code and the number, 7–15 digits, no spaces. */
export const SIGNAL_NUMBER = /^\+[1-9]\d{6,14}$/u;

/** `adapters.signal` as written in the file. */
export const signalSchema = z.strictObject({
  ...chatAccessShape,
  apiUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  number: z.string().regex(SIGNAL_NUMBER).optional(),
  mode: z.enum(["websocket", "polling"]).optional(),
  readReceipts: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.signal`. */
export const SIGNAL_EXPECTED: Record<string, string> = {
  "adapters.signal.apiUrl": "the http(s) URL of the signal-cli REST API (bbernhard/signal-cli-rest-api), such as http://127.0.0.1:8080",
  "adapters.signal.number":
    "the bot's registered Signal number in E.164 form: '+', country code and number, no spaces, in quotes (such as \"+4915100000000\"; unquoted, YAML reads it as a number)",
  "adapters.signal.mode": "websocket (the REST API runs with MODE=json-rpc, the default) or polling (MODE=normal or MODE=native)",
  "adapters.signal.readReceipts": "true or false: send a read receipt for every message the bot takes (default true)",
  ...chatAccessExpected("signal"),
};

/** `adapters.signal`, resolved. */
export interface SignalConfig extends ChatAccess {
  /** The REST API base URL; `null` when missing ({@link signalProblems} reports it). */
  apiUrl: string | null;
  /** The bot's number (E.164); `null` when missing. */
  number: string | null;
  mode: "websocket" | "polling";
  readReceipts: boolean;
}

/** Resolves `adapters.signal` (`null`: not configured or `enabled: false`). */
export function resolveSignalConfig(section: z.infer<typeof signalSchema> | undefined): SignalConfig | null {
  if (section === undefined || section.enabled === false) return null;
  return {
    apiUrl: section.apiUrl?.replace(/\/+$/u, "") ?? null,
    number: section.number ?? null,
    mode: section.mode ?? "websocket",
    readReceipts: section.readReceipts ?? true,
    ...resolveChatAccess(section),
  };
}

/** The `adapters.signal` keys whose values are secrets: none (the section holds no credentials). */
export const SIGNAL_SECRET_KEYS: readonly string[] = [];

/** What is missing or inconsistent in `adapters.signal` (empty: ready, or not configured). */
export function signalProblems(signal: SignalConfig | null | undefined): string[] {
  if (signal === null || signal === undefined) return [];
  const problems: string[] = [];
  if (signal.apiUrl === null) {
    problems.push(
      "adapters.signal.apiUrl: missing: set it to the URL of your signal-cli REST API (bbernhard/signal-cli-rest-api), such as http://127.0.0.1:8080",
    );
  }
  if (signal.number === null) {
    problems.push(
      "adapters.signal.number: missing: set it to the bot's Signal number as registered or linked in the REST API, in E.164 form such as +4915100000000",
    );
  }
  return problems;
}
