/**
 * Outbound formatting for Discord: Discord renders Markdown itself (bold, italics, code,
 * fenced blocks, quotes, lists, headings, links), so the model's Markdown is sent as it is,
 * split at Discord's 2,000-character limit on paragraph/line boundaries without breaking
 * code blocks ({@link splitMessage}). Mentions in the text never ping anyone: every message
 * carries `allowed_mentions` with no parse types (no @everyone, @here, roles or users), only
 * the author of the message replied to. Links get no embeds (previews) unless asked for: every
 * message carries the SUPPRESS_EMBEDS flag, so Discord never fetches a URL the model wrote.
 *
 * @module
 */
import { splitMessage } from "../chat/index.js";

/** Discord's limit on the `content` of one message, in characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Discord's SUPPRESS_EMBEDS message flag (`1 << 2`, discord.js `MessageFlags.SuppressEmbeds`): no link previews. */
export const DISCORD_SUPPRESS_EMBEDS = 1 << 2;

/** Options of {@link discordMessageBodies}. */
export interface DiscordBodyOptions {
  /** Let Discord embed (preview) links (default false: every body carries SUPPRESS_EMBEDS). */
  linkPreviews?: boolean;
}

/** The JSON body of one `POST /channels/{id}/messages`. */
export interface DiscordMessageBody {
  content: string;
  allowed_mentions: { parse: never[]; replied_user: boolean };
  /** {@link DISCORD_SUPPRESS_EMBEDS} unless link previews are on. */
  flags?: number;
  message_reference?: { message_id: string; fail_if_not_exists: false };
}

/**
 * The message bodies of one reply, in order: the text split at 2,000 characters, the first
 * chunk a reply to `replyTo` (when given; Discord sends it as a plain message if that
 * message is gone), mentions disabled except the replied user, embeds suppressed unless
 * `options.linkPreviews`.
 *
 * @example
 * ```ts
 * discordMessageBodies("x".repeat(4500), "123").length; // 3 chunks, each within 2,000 characters
 * ```
 */
export function discordMessageBodies(text: string, replyTo: string | null, options: DiscordBodyOptions = {}): DiscordMessageBody[] {
  return splitMessage(text, DISCORD_MESSAGE_LIMIT).map((content, i) => ({
    content,
    allowed_mentions: { parse: [], replied_user: i === 0 && replyTo !== null },
    ...(options.linkPreviews === true ? {} : { flags: DISCORD_SUPPRESS_EMBEDS }),
    ...(i === 0 && replyTo !== null ? { message_reference: { message_id: replyTo, fail_if_not_exists: false as const } } : {}),
  }));
}
