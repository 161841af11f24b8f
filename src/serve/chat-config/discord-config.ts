/**
 * `adapters.discord`: its zod schema, `EXPECTED` lines, resolved {@link DiscordConfig}
 * (the token from the file, else DISCORD_BOT_TOKEN), {@link discordProblems} (what
 * `chatAdapterProblems` reports for it) and {@link DISCORD_SECRET_KEYS}.
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";
import { linkPreviewsExpected, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "./link-previews.js";

/** The environment variable a Discord bot token may come from. */
export const DISCORD_TOKEN_ENV = "DISCORD_BOT_TOKEN";

/** The shape of a Discord bot token: three base64url parts joined by dots. */
const DISCORD_TOKEN = /^[\w-]+\.[\w-]+\.[\w-]+$/u;

/** `adapters.discord` as written in the file. */
export const discordSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  token: z.string().regex(DISCORD_TOKEN).optional(),
  apiUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  gatewayUrl: z
    .string()
    .url()
    .regex(/^wss?:\/\//u)
    .optional(),
});

/** The `EXPECTED` lines of `adapters.discord`. */
export const DISCORD_EXPECTED: Record<string, string> = {
  "adapters.discord.token": `the bot token from the Developer Portal (Bot → Reset Token), three parts joined by dots (or set ${DISCORD_TOKEN_ENV})`,
  "adapters.discord.apiUrl": "the REST API base URL (default https://discord.com/api)",
  "adapters.discord.gatewayUrl": "a ws:// or wss:// gateway URL (default: the one GET /gateway/bot names)",
  ...chatAccessExpected("discord"),
  ...linkPreviewsExpected("discord"),
};

/** `adapters.discord`, resolved. */
export interface DiscordConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else DISCORD_BOT_TOKEN; `null` when neither has one ({@link discordProblems} reports it). */
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
    ...resolveLinkPreviews(section),
  };
}

/** The `adapters.discord` keys whose values are secrets (never shown in errors or `config show`). */
export const DISCORD_SECRET_KEYS: readonly string[] = ["adapters.discord.token"];

/** What is missing or inconsistent in `adapters.discord` (empty: ready, or not configured). */
export function discordProblems(discord: DiscordConfig | null | undefined): string[] {
  if (discord === null || discord === undefined) return [];
  if (discord.token === null) {
    return [
      `adapters.discord.token: missing: set it in the config file or in the ${DISCORD_TOKEN_ENV} environment variable (Developer Portal → your application → Bot → Reset Token)`,
    ];
  }
  if (!DISCORD_TOKEN.test(discord.token))
    return [`adapters.discord.token: ${DISCORD_TOKEN_ENV} does not look like a bot token (three parts of letters, digits, '_' or '-' joined by dots)`];
  return [];
}
