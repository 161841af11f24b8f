/**
 * Telegram as `threadline serve` knows it: {@link telegramPlatform}, the descriptor of
 * `adapters.telegram` (zod schema, `EXPECTED` lines, the resolved {@link TelegramConfig} with
 * the token from the file, else TELEGRAM_BOT_TOKEN, its secret keys, its problems, and a
 * `create` that imports the adapter, and so grammY, only when the section is configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform, fromEnv, secret } from "../chat-platform.js";
import { LINK_PREVIEWS_EXPECTED, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "../link-previews.js";

/** The environment variable a Telegram bot token may come from. */
const TELEGRAM_TOKEN_ENV = "TELEGRAM_BOT_TOKEN";

/** `adapters.telegram` as written in the file. */
const telegramSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  token: secret(z.string().regex(/^\d+:[\w-]+$/u)).optional(),
  mode: z.enum(["polling", "webhook"]).optional(),
  webhookUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  webhookPath: z
    .string()
    .regex(/^\/[\w\-/.]*$/u)
    .optional(),
  secret: secret(z.string().regex(/^[\w-]{16,256}$/u)).optional(),
  apiRoot: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
});

/** `adapters.telegram`, resolved. */
export interface TelegramConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else TELEGRAM_BOT_TOKEN; `null` when neither has one (its problems report it). */
  token: string | null;
  mode: "polling" | "webhook";
  webhookUrl: string | null;
  webhookPath: string | null;
  secret: string | null;
  apiRoot: string | null;
}

/** The Telegram platform: `adapters.telegram` and its adapter (grammY, loaded by `create` only). */
export const telegramPlatform = defineChatPlatform({
  name: "telegram",
  schema: telegramSchema,
  expected: {
    token: `a bot token from BotFather such as 123456:ABC-DEF… (or set ${TELEGRAM_TOKEN_ENV})`,
    mode: "polling (default) or webhook",
    webhookUrl: "the public https URL Telegram sends updates to (webhook mode)",
    webhookPath: "the route on the gateway's server for updates, such as /telegram (default: the path of webhookUrl)",
    secret: "16–256 letters, digits, '_' or '-': the secret_token Telegram sends with every webhook update (generate one with: openssl rand -hex 24)",
    apiRoot: "the Bot API base URL (default https://api.telegram.org, or a self-hosted Bot API server)",
    ...CHAT_ACCESS_EXPECTED,
    ...LINK_PREVIEWS_EXPECTED,
  },
  secrets: { token: true, secret: true },
  resolve: (section, env): TelegramConfig => ({
    token: section.token ?? fromEnv(env, TELEGRAM_TOKEN_ENV),
    mode: section.mode ?? "polling",
    webhookUrl: section.webhookUrl ?? null,
    webhookPath: section.webhookPath ?? null,
    secret: section.secret ?? null,
    apiRoot: section.apiRoot ?? null,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  }),
  problems: telegramProblems,
  async create(telegram, { http, logger, rules }) {
    const { TelegramAdapter } = await import("./index.js");
    const adapter = await TelegramAdapter.create({
      token: telegram.token!,
      mode: telegram.mode,
      apiRoot: telegram.apiRoot,
      webhookUrl: telegram.webhookUrl,
      webhookPath: telegram.webhookPath,
      secret: telegram.secret,
      linkPreviews: telegram.linkPreviews,
      rules,
      logger,
    });
    adapter.routes(http);
    return adapter;
  },
  webhookReceiver: (telegram) => (telegram.mode === "webhook" ? "adapters.telegram (webhook mode)" : null),
  publicUrl: (telegram) => telegram.webhookUrl,
});

/** What is missing or inconsistent in `adapters.telegram` (empty: ready). */
function telegramProblems(telegram: TelegramConfig): string[] {
  const problems: string[] = [];
  if (telegram.token === null) {
    problems.push(
      `adapters.telegram.token: missing: set it in the config file or in the ${TELEGRAM_TOKEN_ENV} environment variable (BotFather's /newbot gives the token)`,
    );
  } else if (!/^\d+:[\w-]+$/u.test(telegram.token)) {
    problems.push(`adapters.telegram.token: ${TELEGRAM_TOKEN_ENV} does not look like a bot token (digits, ':', then letters, digits, '_' or '-')`);
  }
  if (telegram.mode === "webhook") {
    if (telegram.webhookUrl === null) problems.push("adapters.telegram.webhookUrl: required in webhook mode (the public https URL Telegram sends updates to)");
    if (telegram.secret === null)
      problems.push(
        "adapters.telegram.secret: required in webhook mode (Telegram sends it in X-Telegram-Bot-Api-Secret-Token, and updates without it are refused)",
      );
  }
  return problems;
}
