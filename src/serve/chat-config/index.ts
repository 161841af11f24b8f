/**
 * The `adapters.<platform>` sections of chat platforms, one module per platform
 * (`<platform>-config.ts`: its zod schema, `EXPECTED` lines, resolved config, resolver,
 * environment variable names, `<platform>Problems` and `<PLATFORM>_SECRET_KEYS`) plus the
 * access keys they share (`chat-access.ts`). Each section is `null` in the resolved config
 * when absent (or `enabled: false`), takes its token from the environment when the file has
 * none, and reports what is missing through {@link chatAdapterProblems} (`threadline config
 * check` and `threadline serve` both call it).
 *
 * This module composes them: {@link SECRET_CONFIG_KEYS} (masked by `config show`, shown by
 * length only in errors), {@link ChatAdaptersConfig} and {@link chatAdapterProblems}. To add
 * a platform: write its module, then add its secret keys, its field and its problems here
 * (and its schema entry in `serve-config.ts`, its block in `chat-adapters.ts`).
 *
 * @module
 */
import type { PlatformAccess } from "../../gateway/index.js";
import { adapterAnswerRules, type ChatAccess } from "./chat-access.js";
import { DISCORD_SECRET_KEYS, discordProblems, type DiscordConfig } from "./discord-config.js";
import { MATRIX_SECRET_KEYS, matrixProblems, type MatrixConfig } from "./matrix-config.js";
import { SIGNAL_SECRET_KEYS, signalProblems, type SignalConfig } from "./signal-config.js";
import { SLACK_SECRET_KEYS, slackProblems, type SlackConfig } from "./slack-config.js";
import { TELEGRAM_SECRET_KEYS, telegramProblems, type TelegramConfig } from "./telegram-config.js";
import { WHATSAPP_SECRET_KEYS, whatsappProblems, type WhatsAppConfig } from "./whatsapp-config.js";

export * from "./chat-access.js";
export * from "./link-previews.js";
export * from "./telegram-config.js";
export * from "./discord-config.js";
export * from "./slack-config.js";
export * from "./whatsapp-config.js";
export * from "./signal-config.js";
export * from "./matrix-config.js";

/**
 * Config keys whose values are secrets: never echoed in errors or `config show`. Each is a
 * dotted path (`adapters.whatsapp.appSecret`) that holds the value in the resolved config too.
 */
export const SECRET_CONFIG_KEYS: ReadonlySet<string> = new Set([
  ...TELEGRAM_SECRET_KEYS,
  ...SLACK_SECRET_KEYS,
  ...DISCORD_SECRET_KEYS,
  ...WHATSAPP_SECRET_KEYS,
  ...MATRIX_SECRET_KEYS,
  ...SIGNAL_SECRET_KEYS,
]);

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

/** The chat platforms with an `adapters.<platform>` section (and `access`, `admins`). */
export const CHAT_PLATFORMS = ["telegram", "discord", "slack", "whatsapp", "signal", "matrix"] as const;

/** The configured chat platform sections, by platform name. */
export function configuredChatSections(adapters: ChatAdaptersConfig): Array<[string, ChatAccess]> {
  return CHAT_PLATFORMS.flatMap((platform) => {
    const section = adapters[platform] ?? null;
    return section === null ? [] : [[platform, section] as [string, ChatAccess]];
  });
}

/**
 * The gateway's access settings of every configured chat platform: its `access`,
 * `allowedUsers`, `allowedChats`, and its admins (`adapters.<platform>.admins` with
 * `gateway.admins.<platform>`).
 */
export function chatPlatformAccess(
  adapters: ChatAdaptersConfig,
  gatewayAdmins: Readonly<Record<string, readonly string[]>> = {},
): Record<string, PlatformAccess> {
  return Object.fromEntries(
    configuredChatSections(adapters).map(([platform, section]) => [
      platform,
      {
        mode: section.access,
        allowedUsers: section.allowedUsers,
        allowedChats: section.allowedChats,
        admins: [...new Set([...section.admins, ...(Object.hasOwn(gatewayAdmins, platform) ? gatewayAdmins[platform]! : [])])],
      },
    ]),
  );
}

/** The rules a platform's adapter applies itself (see {@link adapterAnswerRules}), with `gateway.admins` counted. */
export function chatAdapterRules(platform: string, section: ChatAccess, gatewayAdmins: Readonly<Record<string, readonly string[]>> = {}) {
  return adapterAnswerRules(section, Object.hasOwn(gatewayAdmins, platform) ? gatewayAdmins[platform]! : []);
}

/**
 * What is missing or inconsistent in the chat platform sections (empty: ready to start).
 * Each problem names the key and what to do, and contains no "; " (callers join and split on it).
 */
export function chatAdapterProblems(adapters: ChatAdaptersConfig): string[] {
  return [
    ...telegramProblems(adapters.telegram),
    ...discordProblems(adapters.discord),
    ...matrixProblems(adapters.matrix),
    ...signalProblems(adapters.signal),
    ...slackProblems(adapters.slack),
    ...whatsappProblems(adapters.whatsapp),
  ];
}
