/**
 * Discord as `threadline serve` knows it: {@link discordPlatform}, the descriptor of
 * `adapters.discord` (zod schema, `EXPECTED` lines, the resolved {@link DiscordConfig} with the
 * token from the file, else DISCORD_BOT_TOKEN, its secret keys, its problems, and a `create`
 * that imports the adapter, and so discord.js, only when the section is configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform, fromEnv, secret } from "../chat-platform.js";
import { LINK_PREVIEWS_EXPECTED, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "../link-previews.js";

/** The environment variable a Discord bot token may come from. */
const DISCORD_TOKEN_ENV = "DISCORD_BOT_TOKEN";

/** The shape of a Discord bot token: three base64url parts joined by dots. */
const DISCORD_TOKEN = /^[\w-]+\.[\w-]+\.[\w-]+$/u;

/** `adapters.discord` as written in the file. */
const discordSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  token: secret(z.string().regex(DISCORD_TOKEN)).optional(),
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
  cdnUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
});

/** `adapters.discord`, resolved. */
export interface DiscordConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else DISCORD_BOT_TOKEN; `null` when neither has one (its problems report it). */
  token: string | null;
  /** The REST base (discord.js `rest.api`); `null`: https://discord.com/api. */
  apiUrl: string | null;
  /** The gateway WebSocket URL; `null`: the URL GET /gateway/bot answers. */
  gatewayUrl: string | null;
  /** The CDN base (discord.js `rest.cdn`); when set, attachments are downloaded from this origin only. `null`: Discord's CDN (cdn.discordapp.com, media.discordapp.net). */
  cdnUrl: string | null;
}

/** The Discord platform: `adapters.discord` and its adapter (discord.js, loaded by `create` only). */
export const discordPlatform = defineChatPlatform({
  name: "discord",
  schema: discordSchema,
  expected: {
    token: `the bot token from the Developer Portal (Bot → Reset Token), three parts joined by dots (or set ${DISCORD_TOKEN_ENV})`,
    apiUrl: "the REST API base URL (default https://discord.com/api)",
    gatewayUrl: "a ws:// or wss:// gateway URL (default: the one GET /gateway/bot names)",
    cdnUrl: "the CDN base URL attachments are downloaded from (default: Discord's CDN, cdn.discordapp.com and media.discordapp.net)",
    ...CHAT_ACCESS_EXPECTED,
    ...LINK_PREVIEWS_EXPECTED,
  },
  secrets: { token: true },
  resolve: (section, env): DiscordConfig => ({
    token: section.token ?? fromEnv(env, DISCORD_TOKEN_ENV),
    apiUrl: section.apiUrl ?? null,
    gatewayUrl: section.gatewayUrl ?? null,
    cdnUrl: section.cdnUrl ?? null,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  }),
  problems: discordProblems,
  async create(discord, { logger, rules }) {
    const { DiscordAdapter } = await import("./index.js");
    return await DiscordAdapter.create({
      token: discord.token!,
      apiUrl: discord.apiUrl,
      gatewayUrl: discord.gatewayUrl,
      cdnUrl: discord.cdnUrl,
      linkPreviews: discord.linkPreviews,
      rules,
      logger,
    });
  },
});

/** What is missing or inconsistent in `adapters.discord` (empty: ready). */
function discordProblems(discord: DiscordConfig): string[] {
  if (discord.token === null) {
    return [
      `adapters.discord.token: missing: set it in the config file or in the ${DISCORD_TOKEN_ENV} environment variable (Developer Portal → your application → Bot → Reset Token)`,
    ];
  }
  if (!DISCORD_TOKEN.test(discord.token))
    return [`adapters.discord.token: ${DISCORD_TOKEN_ENV} does not look like a bot token (three parts of letters, digits, '_' or '-' joined by dots)`];
  return [];
}
