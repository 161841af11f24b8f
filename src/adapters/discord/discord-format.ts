/**
 * Outbound formatting for Discord: Discord renders Markdown itself (bold, italics, code,
 * fenced blocks, quotes, lists, headings, links), so the model's Markdown is sent as it is,
 * split at Discord's 2,000-character limit on paragraph/line boundaries without breaking
 * code blocks ({@link splitMessage}). Mentions in the text never ping anyone: every message
 * carries `allowed_mentions` with no parse types (no @everyone, @here, roles or users), only
 * the author of the message replied to.
 *
 * @module
 */
import { splitMessage } from "../chat/index.js";

/** Discord's limit on the `content` of one message, in characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** The JSON body of one `POST /channels/{id}/messages`. */
export interface DiscordMessageBody {
  content: string;
  allowed_mentions: { parse: never[]; replied_user: boolean };
  message_reference?: { message_id: string; fail_if_not_exists: false };
}

/**
 * The message bodies of one reply, in order: the text split at 2,000 characters, the first
 * chunk a reply to `replyTo` (when given; Discord sends it as a plain message if that
 * message is gone), mentions disabled except the replied user.
 *
 * @example
 * ```ts
 * discordMessageBodies("x".repeat(4500), "123").length; // 3 chunks, each within 2,000 characters
 * ```
 */
export function discordMessageBodies(text: string, replyTo: string | null): DiscordMessageBody[] {
  return splitMessage(text, DISCORD_MESSAGE_LIMIT).map((content, i) => ({
    content,
    allowed_mentions: { parse: [], replied_user: i === 0 && replyTo !== null },
    ...(i === 0 && replyTo !== null ? { message_reference: { message_id: replyTo, fail_if_not_exists: false as const } } : {}),
  }));
}
