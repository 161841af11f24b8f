/**
 * Whose sessions an MCP caller sees: the same rule as the HTTP API's (docs/http.md,
 * "Authentication and tenants"). A caller with a `userId` (a scoped API key over HTTP) sees
 * only sessions whose `userId` is that user; another tenant's session does not exist for it
 * (the same "not found" as an unknown id). A caller without one (an admin key, or stdio,
 * where the local user owns the database) sees every session.
 *
 * @module
 */
import { ConflictError, NotFoundError, type Session, type SessionHistory } from "../store/index.js";

/** Who calls the MCP server: the tenant it is scoped to, or `null` for all sessions. */
export interface McpCaller {
  userId: string | null;
}

/** The caller of a stdio server (the local user: every session). */
export const LOCAL_CALLER: McpCaller = { userId: null };

/** The listing and search filter of a caller (`{}` for an unscoped caller). */
export function userFilter(caller: McpCaller): { userId?: string } {
  return caller.userId === null ? {} : { userId: caller.userId };
}

/** The "not found" of an unknown session, and of another tenant's session alike. */
export function sessionNotFound(id: string): NotFoundError {
  return new NotFoundError(`No session with the id '${id}'. Session ids are exact: call sessions_list or session_search to find one.`);
}

/** The session `id` if the caller may see it; otherwise {@link sessionNotFound}. */
export async function visibleSession(db: SessionHistory, caller: McpCaller, id: string): Promise<Session> {
  const session = await db.getSession(id);
  if (session === null || (caller.userId !== null && session.userId !== caller.userId)) throw sessionNotFound(id);
  return session;
}

/**
 * Sets a title for the caller. A scoped caller is never told which session holds a
 * conflicting title when that session is not its own (as the HTTP API's rename).
 */
export async function setVisibleTitle(db: SessionHistory, caller: McpCaller, id: string, title: string | null): Promise<string | null> {
  await visibleSession(db, caller, id);
  try {
    return await db.setTitle(id, title);
  } catch (error) {
    if (error instanceof ConflictError && caller.userId !== null && error.sessionId !== undefined && error.sessionId !== id) {
      const holder = await db.getSession(error.sessionId);
      if (holder === null || holder.userId !== caller.userId) throw new ConflictError("That title is already in use; choose another title.");
    }
    throw error;
  }
}
