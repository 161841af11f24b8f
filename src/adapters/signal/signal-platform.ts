/**
 * Signal (through the signal-cli REST API) as `threadline serve` knows it:
 * {@link signalPlatform}, the descriptor of `adapters.signal` (zod schema, `EXPECTED` lines,
 * the resolved {@link SignalConfig}, no secret keys (the section holds no credentials), its
 * problems, and a `create` that imports the adapter, and so `ws`, only when the section is
 * configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform } from "../chat-platform.js";

/** A phone number in E.164 form: `+`, the country code and the number, 7–15 digits, no spaces. */
const SIGNAL_NUMBER = /^\+[1-9]\d{6,14}$/u;

/** `adapters.signal` as written in the file. */
const signalSchema = z.strictObject({
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

/** `adapters.signal`, resolved. */
export interface SignalConfig extends ChatAccess {
  /** The REST API base URL; `null` when missing (its problems report it). */
  apiUrl: string | null;
  /** The bot's number (E.164); `null` when missing. */
  number: string | null;
  mode: "websocket" | "polling";
  readReceipts: boolean;
}

/** The Signal platform: `adapters.signal` and its adapter (the signal-cli REST API, `ws` loaded by `create` only). */
export const signalPlatform = defineChatPlatform({
  name: "signal",
  schema: signalSchema,
  expected: {
    apiUrl: "the http(s) URL of the signal-cli REST API (bbernhard/signal-cli-rest-api), such as http://127.0.0.1:8080",
    number:
      "the bot's registered Signal number in E.164 form: '+', country code and number, no spaces, in quotes (such as \"+4915100000000\"; unquoted, YAML reads it as a number)",
    mode: "websocket (the REST API runs with MODE=json-rpc, the default) or polling (MODE=normal or MODE=native)",
    readReceipts: "true or false: send a read receipt for every message the bot takes (default true)",
    ...CHAT_ACCESS_EXPECTED,
  },
  secrets: {},
  resolve: (section): SignalConfig => ({
    apiUrl: section.apiUrl?.replace(/\/+$/u, "") ?? null,
    number: section.number ?? null,
    mode: section.mode ?? "websocket",
    readReceipts: section.readReceipts ?? true,
    ...resolveChatAccess(section),
  }),
  problems: signalProblems,
  async create(signal, { logger, rules }) {
    const { SignalAdapter } = await import("./index.js");
    return await SignalAdapter.create({
      apiUrl: signal.apiUrl!,
      number: signal.number!,
      mode: signal.mode,
      readReceipts: signal.readReceipts,
      rules,
      logger,
    });
  },
});

/** What is missing or inconsistent in `adapters.signal` (empty: ready). */
function signalProblems(signal: SignalConfig): string[] {
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
