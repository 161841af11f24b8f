/**
 * Whose conversations `session_search` may show: those of the person speaking (the sender of
 * the message the turn answers: their platform's user id and that id's aliases) and, in a
 * group or channel, only that chat — never another speaker's or another tenant's sessions,
 * whoever opened the current session. When the speaker is the gateway's owner
 * (`gateway.owner`), their identities on every platform count as one person. The scope is a
 * filter handed to the store's search and listing, so nothing outside it is ever read.
 *
 * @module
 */
import type { TurnSpeaker } from "../agents/index.js";
import { IdentityAliases, normalizeIdentity } from "../gateway/index.js";
import type { AliasStore, SessionHistory, SourceIdentity } from "../store/index.js";

/**
 * How far `session_search` looks (config `tools.sessionSearch.scope`):
 * - `user` (default, the narrowest): sessions of the person speaking on the same platform
 *   (their id or any alias of it; the owner's identities on every platform when the speaker
 *   is the owner); in a group or channel, only that person's sessions of that chat.
 * - `chat`: as `user` in a DM; in a group or channel, every session of that chat (what its
 *   members all saw), never the members' DMs.
 * - `all`: every session in the database, as before scoping existed — only for a gateway with
 *   a single owner.
 */
export type SessionSearchScope = "user" | "chat" | "all";

/** The scopes, narrowest first. */
export const SESSION_SEARCH_SCOPES: readonly SessionSearchScope[] = ["user", "chat", "all"];

/**
 * The operator's ids per platform (config `gateway.owner`): `{ telegram: ["123"], cli: ["alice"] }`.
 * A speaker with one of these ids (or an alias of one) is the owner, and the owner's sessions
 * on every listed platform are one person's.
 */
export type OwnerIdentities = Readonly<Record<string, readonly string[]>>;

/** Store filters that confine a search (`undefined` fields: no filter). */
export interface ScopeFilter {
  sources?: string[];
  userIds?: string[];
  /** (source, user id) pairs: one person on several platforms. */
  identities?: SourceIdentity[];
  chatId?: string;
}

/** Matches nothing: used when nobody known is speaking. */
const NOTHING: ScopeFilter = { userIds: [] };

/** Options of {@link scopeFilterFor}. */
export interface ScopeFilterOptions {
  /**
   * Who is speaking (the gateway passes it with every tool call). Absent: the session's own
   * user, chat type and source stand in for the speaker (a library caller without a gateway).
   */
  speaker?: TurnSpeaker | null;
  /** The operator's identities (config `gateway.owner`). */
  owner?: OwnerIdentities;
}

/** Every id of `userId` on `platform`: as given, normalised, canonical, and the canonical id's aliases. */
export async function idsOfPerson(db: AliasStore, platform: string, userId: string): Promise<string[]> {
  const canonical = await new IdentityAliases(db).resolve(platform, userId);
  return [...new Set([userId, normalizeIdentity(platform, userId), canonical, ...(await db.listAliases(platform, canonical))])];
}

/** The speaker a session stands for when no speaker is given: its stored user in its stored chat. */
export async function speakerOfSession(db: SessionHistory & AliasStore, sessionId: string): Promise<TurnSpeaker | null> {
  const session = await db.getSession(sessionId);
  if (session === null) return null;
  const aliases = session.userId === null ? [] : await idsOfPerson(db, session.source, session.userId);
  return { platform: session.source, userId: session.userId, aliases, chatType: session.chatType ?? "dm", chatId: session.chatId };
}

/** The owner's (source, user id) pairs with their aliases, or `null` when `speaker` is not the owner. */
async function ownerIdentitiesFor(
  db: AliasStore,
  speaker: TurnSpeaker,
  ids: readonly string[],
  owner: OwnerIdentities | undefined,
): Promise<SourceIdentity[] | null> {
  const listed = owner?.[speaker.platform];
  if (owner === undefined || listed === undefined || listed.length === 0) return null;
  const ownIds = new Set<string>();
  for (const id of listed) for (const alias of await idsOfPerson(db, speaker.platform, id)) ownIds.add(alias);
  if (!ids.some((id) => ownIds.has(id))) return null;
  const identities: SourceIdentity[] = ids.map((userId) => ({ source: speaker.platform, userId }));
  for (const [platform, list] of Object.entries(owner)) {
    for (const id of list) for (const userId of await idsOfPerson(db, platform, id)) identities.push({ source: platform, userId });
  }
  return identities;
}

/**
 * The filter for a search asked in `sessionId` under `scope`, for the person speaking
 * (`options.speaker`). A speaker without a user id (and, for `chat` in a group, a chat
 * without an id) can see no other session. In a group or channel the search stays in that
 * chat even for the owner (the reply is read by everyone there); in a direct chat the owner
 * sees their sessions on every platform of `options.owner`.
 */
export async function scopeFilterFor(
  db: SessionHistory & AliasStore,
  sessionId: string,
  scope: SessionSearchScope,
  options: ScopeFilterOptions = {},
): Promise<ScopeFilter> {
  if (scope === "all") return {};
  const speaker = options.speaker ?? (await speakerOfSession(db, sessionId));
  if (speaker === null) return NOTHING;
  const sources = [speaker.platform];
  const group = speaker.chatType !== "dm";
  if (group && scope === "chat") return speaker.chatId === null ? NOTHING : { sources, chatId: speaker.chatId };
  if (speaker.userId === null) return NOTHING;
  const userIds = [...new Set([speaker.userId, ...speaker.aliases, ...(await idsOfPerson(db, speaker.platform, speaker.userId))])];
  if (group) return speaker.chatId === null ? NOTHING : { sources, userIds, chatId: speaker.chatId };
  const identities = await ownerIdentitiesFor(db, speaker, userIds, options.owner);
  if (identities === null) return { sources, userIds };
  return { sources: [...new Set(identities.map((i) => i.source))], identities };
}
