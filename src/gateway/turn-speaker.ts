/**
 * Who a turn acts for ({@link TurnSpeaker}): the sender of the message it answers, with their
 * ids on the platform (as given, canonical, and the canonical id's recorded aliases). Tools
 * search and remember as this person, never as whoever opened the session.
 *
 * @module
 */
import type { TurnSpeaker } from "../agents/index.js";
import type { AliasStore } from "../store/index.js";
import type { IdentityAliases } from "./identity-aliases.js";
import { isSharedMultiUserSession, type KeySettings } from "./session-key.js";
import type { SessionSource } from "./session-source.js";

/**
 * The speaker of a message from `source`. `unknown`: the sender is not known (a resumed turn);
 * only a direct chat's source still names the person then.
 */
export async function speakerOfSource(aliases: IdentityAliases, _db: AliasStore, source: SessionSource, unknown = false): Promise<TurnSpeaker> {
  const chatId = source.chatId ?? null;
  const userId = unknown && source.chatType !== "dm" ? null : (source.userId ?? null);
  if (userId === null) return { platform: source.platform, userId: null, aliases: [], chatType: source.chatType, chatId };
  const ids = new Set<string>([userId]);
  for (const id of [userId, source.userIdAlt ?? null]) {
    if (id === null || id === "") continue;
    // The group lists the canonical id first, then its aliases.
    for (const alias of await aliases.group(source.platform, id)) ids.add(alias);
  }
  return { platform: source.platform, userId, aliases: [...ids], chatType: source.chatType, chatId };
}

/**
 * Whom the turn before an automatic reset acts for: the person of the expiring session when
 * one person owns it (a direct chat, or a group lane per person), else nobody (`userId: null`:
 * a shared group session belongs to no one person, so nothing is saved for anyone).
 */
export async function speakerOfExpiringSession(
  aliases: IdentityAliases,
  db: AliasStore,
  origin: unknown,
  keySettings: KeySettings,
): Promise<TurnSpeaker | null> {
  if (typeof origin !== "object" || origin === null) return null;
  const source = origin as SessionSource;
  if (typeof source.platform !== "string" || typeof source.chatType !== "string") return null;
  return speakerOfSource(aliases, db, source, isSharedMultiUserSession(source, keySettings));
}
