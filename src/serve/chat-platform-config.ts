/**
 * The `adapters.<platform>` sections of chat platforms. Each platform's section has its
 * own connection keys plus the same access keys ({@link chatAccessShape}: `allowedUsers`,
 * `allowedChats`, `groupReply`, `answerBots`), is `null` in the resolved config when absent
 * (or `enabled: false`), takes its token from the environment when the file has none, and
 * reports what is missing through {@link chatAdapterProblems} (`threadline config check`
 * and `threadline serve` both call it). Every platform slots in the same way: a schema here, its `EXPECTED` lines, a resolver, and a case in `chatAdapterProblems`.
 *
 * @module
 */
import { z } from "zod";
import type { AnswerRules } from "../adapters/chat/index.js";

/** Zod shape of the access keys every chat platform section has. */
export const chatAccessShape = {
  enabled: z.boolean().optional(),
  allowedUsers: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  allowedChats: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  groupReply: z.enum(["mention", "all"]).optional(),
  answerBots: z.boolean().optional(),
};

/** The `EXPECTED` lines of the access keys of `adapters.<platform>`. */
export function chatAccessExpected(platform: string): Record<string, string> {
  return {
    [`adapters.${platform}.enabled`]: "true or false (default true when the section is present)",
    [`adapters.${platform}.allowedUsers`]: "a list of user ids allowed to talk to the bot (empty or absent: everyone)",
    [`adapters.${platform}.allowedChats`]: "a list of chat ids the bot answers in (empty or absent: every chat)",
    [`adapters.${platform}.groupReply`]: "mention (answer in groups only when mentioned, replied to or in the bot's thread) or all",
    [`adapters.${platform}.answerBots`]: "true or false (answer messages from other bots, default false)",
  };
}

type AccessSection = { allowedUsers?: Array<string | number>; allowedChats?: Array<string | number>; groupReply?: "mention" | "all"; answerBots?: boolean };

/** The resolved access keys of a section. */
export function resolveChatAccess(section: AccessSection): AnswerRules {
  return {
    allowedUsers: (section.allowedUsers ?? []).map(String),
    allowedChats: (section.allowedChats ?? []).map(String),
    groupReply: section.groupReply ?? "mention",
    answerBots: section.answerBots ?? false,
  };
}

/** Config keys whose values are secrets: never echoed in errors or `config show`. */
export const SECRET_CONFIG_KEYS: ReadonlySet<string> = new Set([
  "adapters.telegram.token",
  "adapters.telegram.secret",
  "adapters.slack.botToken",
  "adapters.slack.signingSecret",
  "adapters.slack.appToken",
  "adapters.discord.token",
  "adapters.whatsapp.accessToken",
  "adapters.whatsapp.appSecret",
  "adapters.whatsapp.verifyToken",
  "adapters.matrix.accessToken",
]);

// --- Telegram ----------------------------------------------------------------------------

/** The environment variable a Telegram bot token may come from. */
export const TELEGRAM_TOKEN_ENV = "TELEGRAM_BOT_TOKEN";

/** `adapters.telegram` as written in the file. */
export const telegramSchema = z.strictObject({
  ...chatAccessShape,
  token: z.string().regex(/^\d+:[\w-]+$/u).optional(),
  mode: z.enum(["polling", "webhook"]).optional(),
  webhookUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  webhookPath: z.string().regex(/^\/[\w\-/.]*$/u).optional(),
  secret: z.string().regex(/^[\w-]{1,256}$/u).optional(),
  apiRoot: z.string().url().regex(/^https?:\/\//u).optional(),
});

/** The `EXPECTED` lines of `adapters.telegram`. */
export const TELEGRAM_EXPECTED: Record<string, string> = {
  "adapters.telegram.token": `a bot token from BotFather such as 123456:ABC-DEF… (or set ${TELEGRAM_TOKEN_ENV})`,
  "adapters.telegram.mode": "polling (default) or webhook",
  "adapters.telegram.webhookUrl": "the public https URL Telegram sends updates to (webhook mode)",
  "adapters.telegram.webhookPath": "the route on the gateway's server for updates, such as /telegram (default: the path of webhookUrl)",
  "adapters.telegram.secret": "1–256 letters, digits, '_' or '-': the secret_token Telegram sends with every webhook update",
  "adapters.telegram.apiRoot": "the Bot API base URL (default https://api.telegram.org, or a self-hosted Bot API server)",
  ...chatAccessExpected("telegram"),
};

/** `adapters.telegram`, resolved. */
export interface TelegramConfig extends AnswerRules {
  /** From the file, else TELEGRAM_BOT_TOKEN; `null` when neither has one ({@link chatAdapterProblems} reports it). */
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
  };
}

// --- Discord -----------------------------------------------------------------------------

/** The environment variable a Discord bot token may come from. */
export const DISCORD_TOKEN_ENV = "DISCORD_BOT_TOKEN";

/** The shape of a Discord bot token: three base64url parts joined by dots. */
const DISCORD_TOKEN = /^[\w-]+\.[\w-]+\.[\w-]+$/u;

/** `adapters.discord` as written in the file. */
export const discordSchema = z.strictObject({
  ...chatAccessShape,
  token: z.string().regex(DISCORD_TOKEN).optional(),
  apiUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  gatewayUrl: z.string().url().regex(/^wss?:\/\//u).optional(),
});

/** The `EXPECTED` lines of `adapters.discord`. */
export const DISCORD_EXPECTED: Record<string, string> = {
  "adapters.discord.token": `the bot token from the Developer Portal (Bot → Reset Token), three parts joined by dots (or set ${DISCORD_TOKEN_ENV})`,
  "adapters.discord.apiUrl": "the REST API base URL (default https://discord.com/api)",
  "adapters.discord.gatewayUrl": "a ws:// or wss:// gateway URL (default: the one GET /gateway/bot names)",
  ...chatAccessExpected("discord"),
};

/** `adapters.discord`, resolved. */
export interface DiscordConfig extends AnswerRules {
  /** From the file, else DISCORD_BOT_TOKEN; `null` when neither has one ({@link chatAdapterProblems} reports it). */
  token: string | null;
  /** The REST base (discord.js `rest.api`); `null`: https://discord.com/api. */
  apiUrl: string | null;
  /** The gateway WebSocket URL; `null`: the URL GET /gateway/bot answers. */
  gatewayUrl: string | null;
}

/** Resolves `adapters.discord` (`null`: not configured or `enabled: false`). */
export function resolveDiscordConfig(section: z.infer<typeof discordSchema> | undefined, env: NodeJS.ProcessEnv): DiscordConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = env[DISCORD_TOKEN_ENV]?.trim();
  return {
    token: section.token ?? (fromEnv ? fromEnv : null),
    apiUrl: section.apiUrl ?? null,
    gatewayUrl: section.gatewayUrl ?? null,
    ...resolveChatAccess(section),
  };
}

// --- Slack -------------------------------------------------------------------------------

/** The environment variables Slack secrets may come from. */
export const SLACK_BOT_TOKEN_ENV = "SLACK_BOT_TOKEN";
export const SLACK_SIGNING_SECRET_ENV = "SLACK_SIGNING_SECRET";
export const SLACK_APP_TOKEN_ENV = "SLACK_APP_TOKEN";

/** `adapters.slack` as written in the file. */
export const slackSchema = z.strictObject({
  ...chatAccessShape,
  botToken: z.string().regex(/^xox[bp]-[\w-]+$/u).optional(),
  signingSecret: z.string().regex(/^[\w-]{8,256}$/u).optional(),
  appToken: z.string().regex(/^xapp-[\w-]+$/u).optional(),
  mode: z.enum(["events", "socket"]).optional(),
  eventsPath: z.string().regex(/^\/[\w\-/.]*$/u).optional(),
  apiUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  assistantStatus: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.slack`. */
export const SLACK_EXPECTED: Record<string, string> = {
  "adapters.slack.botToken": `the bot token xoxb-… from the app's OAuth & Permissions page (or set ${SLACK_BOT_TOKEN_ENV})`,
  "adapters.slack.signingSecret": `the app's signing secret from Basic Information, 8–256 letters or digits (or set ${SLACK_SIGNING_SECRET_ENV})`,
  "adapters.slack.appToken": `an app-level token xapp-… with connections:write, for Socket Mode (or set ${SLACK_APP_TOKEN_ENV})`,
  "adapters.slack.mode": "events (the Events API over HTTP, the default without an app token) or socket (Socket Mode, the default with one)",
  "adapters.slack.eventsPath": "the route on the gateway's server Slack sends events to, such as /slack/events (the default)",
  "adapters.slack.apiUrl": "the Web API base URL (default https://slack.com/api/)",
  "adapters.slack.assistantStatus": "true or false: show \"is thinking…\" in threads with assistant.threads.setStatus while a turn runs (AI apps; default false)",
  ...chatAccessExpected("slack"),
};

/** `adapters.slack`, resolved. */
export interface SlackConfig extends AnswerRules {
  /** From the file, else SLACK_BOT_TOKEN; `null` when neither has one. */
  botToken: string | null;
  /** From the file, else SLACK_SIGNING_SECRET. */
  signingSecret: string | null;
  /** From the file, else SLACK_APP_TOKEN. */
  appToken: string | null;
  mode: "events" | "socket";
  eventsPath: string;
  apiUrl: string | null;
  assistantStatus: boolean;
}

/** Resolves `adapters.slack` (`null`: not configured or `enabled: false`). */
export function resolveSlackConfig(section: z.infer<typeof slackSchema> | undefined, env: NodeJS.ProcessEnv): SlackConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  const appToken = section.appToken ?? fromEnv(SLACK_APP_TOKEN_ENV);
  return {
    botToken: section.botToken ?? fromEnv(SLACK_BOT_TOKEN_ENV),
    signingSecret: section.signingSecret ?? fromEnv(SLACK_SIGNING_SECRET_ENV),
    appToken,
    mode: section.mode ?? (appToken !== null ? "socket" : "events"),
    eventsPath: section.eventsPath ?? "/slack/events",
    apiUrl: section.apiUrl ?? null,
    assistantStatus: section.assistantStatus ?? false,
    ...resolveChatAccess(section),
  };
}

// --- WhatsApp (Cloud API) ---------------------------------------------------------------

/** The environment variables WhatsApp secrets may come from. */
export const WHATSAPP_ACCESS_TOKEN_ENV = "WHATSAPP_ACCESS_TOKEN";
export const WHATSAPP_APP_SECRET_ENV = "WHATSAPP_APP_SECRET";
export const WHATSAPP_VERIFY_TOKEN_ENV = "WHATSAPP_VERIFY_TOKEN";

/** The Graph API version used when `apiVersion` is not set. */
export const WHATSAPP_DEFAULT_API_VERSION = "v26.0";

/** Shapes of the WhatsApp secrets and ids (checked on values from the file and from the environment). */
const WHATSAPP_ACCESS_TOKEN = /^[\w\-.|]{16,4096}$/u;
const WHATSAPP_APP_SECRET = /^[\w-]{16,256}$/u;
const WHATSAPP_VERIFY_TOKEN = /^[\x21-\x7e]{8,256}$/u;
const WHATSAPP_PHONE_NUMBER_ID = /^\d{1,32}$/u;

/** `adapters.whatsapp` as written in the file. */
export const whatsappSchema = z.strictObject({
  ...chatAccessShape,
  accessToken: z.string().regex(WHATSAPP_ACCESS_TOKEN).optional(),
  appSecret: z.string().regex(WHATSAPP_APP_SECRET).optional(),
  verifyToken: z.string().regex(WHATSAPP_VERIFY_TOKEN).optional(),
  // YAML reads an unquoted id as a number: both are taken.
  phoneNumberId: z.union([z.string().regex(WHATSAPP_PHONE_NUMBER_ID), z.number().int().nonnegative()]).optional(),
  apiUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  apiVersion: z.string().regex(/^v\d{1,3}\.\d{1,3}$/u).optional(),
  webhookPath: z.string().regex(/^\/[\w\-/.]*$/u).optional(),
  readReceipts: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.whatsapp`. */
export const WHATSAPP_EXPECTED: Record<string, string> = {
  "adapters.whatsapp.accessToken": `a Graph API access token (a system user's permanent token, EAA…) with whatsapp_business_messaging (or set ${WHATSAPP_ACCESS_TOKEN_ENV})`,
  "adapters.whatsapp.appSecret": `the Meta app's secret (App settings → Basic → App secret), 16–256 letters or digits (or set ${WHATSAPP_APP_SECRET_ENV})`,
  "adapters.whatsapp.verifyToken": `a string you choose, 8–256 visible characters without spaces, entered again as the webhook's Verify token (or set ${WHATSAPP_VERIFY_TOKEN_ENV})`,
  "adapters.whatsapp.phoneNumberId": "the Phone number ID of the business number (WhatsApp → API Setup), digits",
  "adapters.whatsapp.apiUrl": "the Graph API base URL (default https://graph.facebook.com)",
  "adapters.whatsapp.apiVersion": `the Graph API version such as ${WHATSAPP_DEFAULT_API_VERSION} (the default)`,
  "adapters.whatsapp.webhookPath": "the route on the gateway's server Meta sends webhooks to, such as /whatsapp/webhook (the default)",
  "adapters.whatsapp.readReceipts": "true or false: mark each answered message as read and show \"typing…\" while the turn runs (default true)",
  ...chatAccessExpected("whatsapp"),
};

/** `adapters.whatsapp`, resolved. */
export interface WhatsAppConfig extends AnswerRules {
  /** From the file, else WHATSAPP_ACCESS_TOKEN; `null` when neither has one ({@link chatAdapterProblems} reports it). */
  accessToken: string | null;
  /** From the file, else WHATSAPP_APP_SECRET: the key of the `X-Hub-Signature-256` HMAC. */
  appSecret: string | null;
  /** From the file, else WHATSAPP_VERIFY_TOKEN: answered in the GET verification handshake. */
  verifyToken: string | null;
  phoneNumberId: string | null;
  apiUrl: string;
  apiVersion: string;
  webhookPath: string;
  readReceipts: boolean;
}

/** Resolves `adapters.whatsapp` (`null`: not configured or `enabled: false`). */
export function resolveWhatsAppConfig(section: z.infer<typeof whatsappSchema> | undefined, env: NodeJS.ProcessEnv): WhatsAppConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  return {
    accessToken: section.accessToken ?? fromEnv(WHATSAPP_ACCESS_TOKEN_ENV),
    appSecret: section.appSecret ?? fromEnv(WHATSAPP_APP_SECRET_ENV),
    verifyToken: section.verifyToken ?? fromEnv(WHATSAPP_VERIFY_TOKEN_ENV),
    phoneNumberId: section.phoneNumberId === undefined ? null : String(section.phoneNumberId),
    apiUrl: section.apiUrl ?? "https://graph.facebook.com",
    apiVersion: section.apiVersion ?? WHATSAPP_DEFAULT_API_VERSION,
    webhookPath: section.webhookPath ?? "/whatsapp/webhook",
    readReceipts: section.readReceipts ?? true,
    ...resolveChatAccess(section),
  };
}

// --- Signal ------------------------------------------------------------------------------

/** A phone number in E.164 form: `+`, the country code and the number, 7–15 digits, no spaces. */
export const SIGNAL_NUMBER = /^\+[1-9]\d{6,14}$/u;

/** `adapters.signal` as written in the file. */
export const signalSchema = z.strictObject({
  ...chatAccessShape,
  apiUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  number: z.string().regex(SIGNAL_NUMBER).optional(),
  mode: z.enum(["websocket", "polling"]).optional(),
  readReceipts: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.signal`. */
export const SIGNAL_EXPECTED: Record<string, string> = {
  "adapters.signal.apiUrl": "the http(s) URL of the signal-cli REST API (bbernhard/signal-cli-rest-api), such as http://127.0.0.1:8080",
  "adapters.signal.number": "the bot's registered Signal number in E.164 form: '+', country code and number, no spaces, in quotes (such as \"+4915100000000\"; unquoted, YAML reads it as a number)",
  "adapters.signal.mode": "websocket (the REST API runs with MODE=json-rpc, the default) or polling (MODE=normal or MODE=native)",
  "adapters.signal.readReceipts": "true or false: send a read receipt for every message the bot takes (default true)",
  ...chatAccessExpected("signal"),
};

/** `adapters.signal`, resolved. */
export interface SignalConfig extends AnswerRules {
  /** The REST API base URL; `null` when missing ({@link chatAdapterProblems} reports it). */
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

// --- Matrix ------------------------------------------------------------------------------

/** The environment variable a Matrix access token may come from. */
export const MATRIX_TOKEN_ENV = "MATRIX_ACCESS_TOKEN";

/** An access token: opaque to clients, sent in an `Authorization: Bearer` header, so visible ASCII without spaces. */
const MATRIX_TOKEN = /^[\x21-\x7e]{8,4096}$/u;

/** A Matrix user id: `@localpart:server.name` (server name with an optional port). */
export const MATRIX_USER_ID = /^@[^\s:]+:[A-Za-z0-9.\-[\]:]+$/u;

/** `adapters.matrix` as written in the file. */
export const matrixSchema = z.strictObject({
  ...chatAccessShape,
  homeserverUrl: z.string().url().regex(/^https?:\/\//u).optional(),
  accessToken: z.string().regex(MATRIX_TOKEN).optional(),
  userId: z.string().regex(MATRIX_USER_ID).optional(),
  autoJoin: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.matrix`. */
export const MATRIX_EXPECTED: Record<string, string> = {
  "adapters.matrix.homeserverUrl": "the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)",
  "adapters.matrix.accessToken": `the bot account's access token: 8 or more visible characters without spaces (or set ${MATRIX_TOKEN_ENV})`,
  "adapters.matrix.userId": "the bot's Matrix user id such as @threadline:example.org (optional: the homeserver tells it; when set it must match)",
  "adapters.matrix.autoJoin": "true (accept room invitations, the default) or false (ignore them)",
  ...chatAccessExpected("matrix"),
};

/** `adapters.matrix`, resolved. */
export interface MatrixConfig extends AnswerRules {
  /** The homeserver's base URL; `null` when missing ({@link chatAdapterProblems} reports it). */
  homeserverUrl: string | null;
  /** From the file, else MATRIX_ACCESS_TOKEN; `null` when neither has one. */
  accessToken: string | null;
  /** The expected user id (checked against `whoami`); `null`: whoever the token belongs to. */
  userId: string | null;
  /** Accept invitations (from allowed users, to allowed rooms). */
  autoJoin: boolean;
}

/** Resolves `adapters.matrix` (`null`: not configured or `enabled: false`). */
export function resolveMatrixConfig(section: z.infer<typeof matrixSchema> | undefined, env: NodeJS.ProcessEnv): MatrixConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = env[MATRIX_TOKEN_ENV]?.trim();
  return {
    homeserverUrl: section.homeserverUrl?.replace(/\/+$/u, "") ?? null,
    accessToken: section.accessToken ?? (fromEnv ? fromEnv : null),
    userId: section.userId ?? null,
    autoJoin: section.autoJoin ?? true,
    ...resolveChatAccess(section),
  };
}

function whatsappProblems(whatsapp: WhatsAppConfig | null | undefined): string[] {
  if (whatsapp === null || whatsapp === undefined) return [];
  const problems: string[] = [];
  if (whatsapp.accessToken === null) {
    problems.push(
      `adapters.whatsapp.accessToken: missing: set it in the config file or in the ${WHATSAPP_ACCESS_TOKEN_ENV} environment variable (Meta Business Suite → System users → Generate token, with whatsapp_business_messaging)`,
    );
  } else if (!WHATSAPP_ACCESS_TOKEN.test(whatsapp.accessToken)) {
    problems.push(`adapters.whatsapp.accessToken: ${WHATSAPP_ACCESS_TOKEN_ENV} does not look like an access token (16 or more letters, digits, '_', '-', '.' or '|')`);
  }
  if (whatsapp.appSecret === null) {
    problems.push(
      `adapters.whatsapp.appSecret: missing: every webhook POST is checked against it (X-Hub-Signature-256), so set it in the config file or in ${WHATSAPP_APP_SECRET_ENV} (App settings → Basic → App secret)`,
    );
  } else if (!WHATSAPP_APP_SECRET.test(whatsapp.appSecret)) {
    problems.push(`adapters.whatsapp.appSecret: ${WHATSAPP_APP_SECRET_ENV} does not look like an app secret (16–256 letters or digits)`);
  }
  if (whatsapp.verifyToken === null) {
    problems.push(
      `adapters.whatsapp.verifyToken: missing: Meta's webhook verification (GET with hub.verify_token) needs it, so choose a string, set it in the config file or in ${WHATSAPP_VERIFY_TOKEN_ENV}, and enter the same string as the Verify token`,
    );
  } else if (!WHATSAPP_VERIFY_TOKEN.test(whatsapp.verifyToken)) {
    problems.push(`adapters.whatsapp.verifyToken: ${WHATSAPP_VERIFY_TOKEN_ENV} must be 8–256 visible characters without spaces`);
  }
  if (whatsapp.phoneNumberId === null) {
    problems.push("adapters.whatsapp.phoneNumberId: missing: the Phone number ID of the business number (App Dashboard → WhatsApp → API Setup), the id replies are sent from");
  }
  return problems;
}

function matrixProblems(matrix: MatrixConfig | null | undefined): string[] {
  if (matrix === null || matrix === undefined) return [];
  const problems: string[] = [];
  if (matrix.homeserverUrl === null) {
    problems.push("adapters.matrix.homeserverUrl: missing: set the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)");
  }
  if (matrix.accessToken === null) {
    problems.push(
      `adapters.matrix.accessToken: missing: set it in the config file or in the ${MATRIX_TOKEN_ENV} environment variable (log in as the bot account and copy its access token, see docs/platforms.md)`,
    );
  } else if (!MATRIX_TOKEN.test(matrix.accessToken)) {
    problems.push(`adapters.matrix.accessToken: ${MATRIX_TOKEN_ENV} does not look like an access token (8 or more visible characters without spaces)`);
  }
  return problems;
}

function signalProblems(signal: SignalConfig | null | undefined): string[] {
  if (signal === null || signal === undefined) return [];
  const problems: string[] = [];
  if (signal.apiUrl === null) {
    problems.push("adapters.signal.apiUrl: missing: set it to the URL of your signal-cli REST API (bbernhard/signal-cli-rest-api), such as http://127.0.0.1:8080");
  }
  if (signal.number === null) {
    problems.push("adapters.signal.number: missing: set it to the bot's Signal number as registered or linked in the REST API, in E.164 form such as +4915100000000");
  }
  return problems;
}

function discordProblems(discord: DiscordConfig | null | undefined): string[] {
  if (discord === null || discord === undefined) return [];
  if (discord.token === null) {
    return [`adapters.discord.token: missing: set it in the config file or in the ${DISCORD_TOKEN_ENV} environment variable (Developer Portal → your application → Bot → Reset Token)`];
  }
  if (!DISCORD_TOKEN.test(discord.token)) return [`adapters.discord.token: ${DISCORD_TOKEN_ENV} does not look like a bot token (three parts of letters, digits, '_' or '-' joined by dots)`];
  return [];
}

/** The chat platform sections of the resolved config. */
export interface ChatAdaptersConfig {
  telegram: TelegramConfig | null;
  /** Absent in configs built before Discord existed: read as not configured. */
  discord?: DiscordConfig | null;
  slack: SlackConfig | null;
  /** Absent in configs built before WhatsApp existed: read as not configured. */
  whatsapp?: WhatsAppConfig | null;
  /** Absent in configs built before Matrix existed: read as not configured. */
  matrix?: MatrixConfig | null;
  /** Absent in configs built before Signal existed: read as not configured. */
  signal?: SignalConfig | null;
}

/**
 * What is missing or inconsistent in the chat platform sections (empty: ready to start).
 * Each problem names the key and what to do, and contains no "; " (callers join and split on it).
 */
export function chatAdapterProblems(adapters: ChatAdaptersConfig): string[] {
  const problems: string[] = [];
  const telegram = adapters.telegram;
  if (telegram !== null) {
    if (telegram.token === null) {
      problems.push(`adapters.telegram.token: missing: set it in the config file or in the ${TELEGRAM_TOKEN_ENV} environment variable (BotFather's /newbot gives the token)`);
    } else if (!/^\d+:[\w-]+$/u.test(telegram.token)) {
      problems.push(`adapters.telegram.token: ${TELEGRAM_TOKEN_ENV} does not look like a bot token (digits, ':', then letters, digits, '_' or '-')`);
    }
    if (telegram.mode === "webhook") {
      if (telegram.webhookUrl === null) problems.push("adapters.telegram.webhookUrl: required in webhook mode (the public https URL Telegram sends updates to)");
      if (telegram.secret === null) problems.push("adapters.telegram.secret: required in webhook mode (Telegram sends it in X-Telegram-Bot-Api-Secret-Token, and updates without it are refused)");
    }
  }
  problems.push(...discordProblems(adapters.discord));
  problems.push(...matrixProblems(adapters.matrix));
  problems.push(...signalProblems(adapters.signal));
  const slack = adapters.slack;
  if (slack !== null) {
    if (slack.botToken === null) {
      problems.push(`adapters.slack.botToken: missing: set it in the config file or in the ${SLACK_BOT_TOKEN_ENV} environment variable (the xoxb- token on the app's OAuth & Permissions page)`);
    } else if (!/^xox[bp]-[\w-]+$/u.test(slack.botToken)) {
      problems.push(`adapters.slack.botToken: ${SLACK_BOT_TOKEN_ENV} does not look like a Slack bot token (xoxb- followed by letters, digits or '-')`);
    }
    if (slack.mode === "events") {
      if (slack.signingSecret === null) {
        problems.push(`adapters.slack.signingSecret: missing: the Events API needs it (set it in the config file or in ${SLACK_SIGNING_SECRET_ENV}: Basic Information → Signing Secret), or use Socket Mode with an appToken`);
      } else if (!/^[\w-]{8,256}$/u.test(slack.signingSecret)) {
        problems.push(`adapters.slack.signingSecret: ${SLACK_SIGNING_SECRET_ENV} does not look like a signing secret (8–256 letters or digits)`);
      }
    } else if (slack.appToken === null) {
      problems.push(`adapters.slack.appToken: missing: Socket Mode needs an app-level token xapp-… with connections:write (set it in the config file or in ${SLACK_APP_TOKEN_ENV})`);
    } else if (!/^xapp-[\w-]+$/u.test(slack.appToken)) {
      problems.push(`adapters.slack.appToken: ${SLACK_APP_TOKEN_ENV} does not look like an app-level token (xapp- followed by letters, digits or '-')`);
    }
  }
  problems.push(...whatsappProblems(adapters.whatsapp));
  return problems;
}
