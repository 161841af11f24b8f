/**
 * `adapters.telegram`: its zod schema, `EXPECTED` lines, resolved {@link TelegramConfig}
 * (the token from the file, else TELEGRAM_BOT_TOKEN), {@link telegramProblems} (what
 * `chatAdapterProblems` reports for it) and {@link TELEGRAM_SECRET_KEYS}.
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";
import { linkPreviewsExpected, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "./link-previews.js";

/** The environment variable a Telegram bot token may come from. */
export const TELEGRAM_TOKEN_ENV = "TELEGRAM_BOT_TOKEN";

/** `adapters.telegram` as written in the file. */
export const telegramSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  token: z
    .string()
    .regex(/^\d+:[\w-]+$/u)
    .optional(),
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
  secret: z
    .string()
    .regex(/^[\w-]{16,256}$/u)
    .optional(),
  apiRoot: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
});

/** The `EXPECTED` lines of `adapters.telegram`. */
export const TELEGRAM_EXPECTED: Record<string, string> = {
  "adapters.telegram.token": `a bot token from BotFather such as 123456:ABC-DEF… (or set ${TELEGRAM_TOKEN_ENV})`,
  "adapters.telegram.mode": "polling (default) or webhook",
  "adapters.telegram.webhookUrl": "the public https URL Telegram sends updates to (webhook mode)",
  "adapters.telegram.webhookPath": "the route on the gateway's server for updates, such as /telegram (default: the path of webhookUrl)",
  "adapters.telegram.secret":
    "16–256 letters, digits, '_' or '-': the secret_token Telegram sends with every webhook update (generate one with: openssl rand -hex 24)",
  "adapters.telegram.apiRoot": "the Bot API base URL (default https://api.telegram.org, or a self-hosted Bot API server)",
  ...chatAccessExpected("telegram"),
  ...linkPreviewsExpected("telegram"),
};

/** `adapters.telegram`, resolved. */
export interface TelegramConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else TELEGRAM_BOT_TOKEN; `null` when neither has one ({@link telegramProblems} reports it). */
  token: string | null;
  mode: "polling" | "webhook";
  webhookUrl: string | null;
  webhookPath: string | null;
  secret: string | null;
  apiRoot: string | null;
}

/** Resolves `adapters.telegram` (`null`: not configured or `enabled: false`). */
export function resolveTelegramConfig(section: z.infer<typeof telegramSchema> | undefined, env: NodeJS.ProcessEnv): TelegramConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = env[TELEGRAM_TOKEN_ENV]?.trim();
  return {
    token: section.token ?? (fromEnv ? fromEnv : null),
    mode: section.mode ?? "polling",
    webhookUrl: section.webhookUrl ?? null,
    webhookPath: section.webhookPath ?? null,
    secret: section.secret ?? null,
    apiRoot: section.apiRoot ?? null,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  };
}

/** The `adapters.telegram` keys whose values are secrets (never shown in errors or `config show`). */
export const TELEGRAM_SECRET_KEYS: readonly string[] = ["adapters.telegram.token", "adapters.telegram.secret"];

/** What is missing or inconsistent in `adapters.telegram` (empty: ready, or not configured). */
export function telegramProblems(telegram: TelegramConfig | null): string[] {
  if (telegram === null) return [];
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
