/**
 * Whose conversations `session_search` may show: the asking session's own person (its
 * platform's user id and that id's aliases) and, in a group or channel, only that chat —
 * never another user's or another tenant's sessions. The scope is a filter handed to the
 * store's search and listing, so nothing outside it is ever read.
 *
 * @module
 */
import { IdentityAliases } from "../gateway/index.js";
import type { AliasStore, SessionHistory } from "../store/index.js";

/**
 * How far `session_search` looks (config `tools.sessionSearch.scope`):
 * - `user` (default, the narrowest): sessions of the same person on the same platform (their
 *   id or any alias of it); in a group or channel, only that person's sessions of that chat.
 * - `chat`: as `user` in a DM; in a group or channel, every session of that chat (what its
 *   members all saw), never the members' DMs.
 * - `all`: every session in the database, as before scoping existed — only for a gateway with
 *   a single owner.
 */
export type SessionSearchScope = "user" | "chat" | "all";

/** The scopes, narrowest first. */
export const SESSION_SEARCH_SCOPES: readonly SessionSearchScope[] = ["user", "chat", "all"];

/** Store filters that confine a search (`undefined` fields: no filter). */
export interface ScopeFilter {
  sources?: string[];
  userIds?: string[];
  chatId?: string;
}

/** Matches nothing: used when the asking session names no person to scope to. */
const NOTHING: ScopeFilter = { userIds: [] };

/**
 * The filter for a search asked from `sessionId` under `scope`. A session without a user id
 * (and, for `chat` in a group, without a chat id) can see no other session.
 */
export async function scopeFilterFor(db: SessionHistory & AliasStore, sessionId: string, scope: SessionSearchScope): Promise<ScopeFilter> {
  if (scope === "all") return {};
  const session = await db.getSession(sessionId);
  if (session === null) return NOTHING;
  const sources = [session.source];
  const group = session.chatType !== null && session.chatType !== "dm";
  if (group && scope === "chat") return session.chatId === null ? NOTHING : { sources, chatId: session.chatId };
  if (session.userId === null) return NOTHING;
  const canonical = await new IdentityAliases(db).resolve(session.source, session.userId);
  const userIds = [...new Set([session.userId, ...(await db.listAliases(session.source, canonical))])];
  if (!group) return { sources, userIds };
  return session.chatId === null ? NOTHING : { sources, userIds, chatId: session.chatId };
}
