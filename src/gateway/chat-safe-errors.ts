/**
 * Error text for chat replies that never names another chat's session. A store conflict
 * names the session it is with (`The title "x" is already used by session <id>`): told to
 * the chat that owns that session, the id helps (`/resume` it); told to anyone else, it
 * leaks another person's session id. The HTTP API leaves it out the same way.
 *
 * A model provider's error text is not for chat users either (account ids, quota states,
 * internal host names, echoes of the request): they get a short ref ({@link modelFailureText}),
 * and the gateway's log has the detail under the same ref.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { ConflictError, sanitizeTitle, type Session } from "../store/index.js";

/**
 * Platforms whose user is the operator: the terminal (`threadline chat`). They see the
 * provider's detail, as the log does; everyone else sees a ref.
 */
export const OPERATOR_PLATFORMS: readonly string[] = Object.freeze(["cli"]);

/** A new ref for a failure: 8 random hex digits, logged with the detail and shown to the chat. */
export function failureRef(): string {
  return randomBytes(4).toString("hex");
}

/**
 * What the chat hears when the model could not answer: `The model could not answer (ref <ref>).`
 * on every chat platform and the HTTP APIs; the provider's message too on the operator's
 * terminal ({@link OPERATOR_PLATFORMS}).
 *
 * @example
 * modelFailureText("telegram", "3fa9c01b", new Error("quota exceeded for org-x"));
 * // "The model could not answer (ref 3fa9c01b)."
 */
export function modelFailureText(platform: string, ref: string, error: unknown): string {
  if (OPERATOR_PLATFORMS.includes(platform)) return `The model could not answer: ${error instanceof Error ? error.message : String(error)}`;
  return `The model could not answer (ref ${ref}).`;
}

/** What the helpers read: the session a conflict names. */
export interface ConflictHolderReader {
  getSession(id: string): Promise<Session | null>;
}

/**
 * The session a conflict names, when it is a session of the chat `key`; `null` when the error
 * names none, or one of another chat (or one that is gone).
 */
async function ownHolder(db: ConflictHolderReader, key: string, error: ConflictError): Promise<string | null | "foreign"> {
  if (error.sessionId === undefined) return null;
  const holder = await db.getSession(error.sessionId);
  return holder !== null && holder.sessionKey === key ? holder.id : "foreign";
}

/**
 * The reply to `/title <text>` when the title is taken. A session of the same chat is named,
 * with how to bring it back; any other holder is not.
 *
 * @example
 * await titleInUseText(db, key, "daily test", error);
 * // 'The title "daily test" is already in use; choose another title.'
 */
export async function titleInUseText(db: ConflictHolderReader, key: string, requested: string, error: ConflictError): Promise<string> {
  const title = sanitizeTitle(requested) ?? requested;
  const holder = await ownHolder(db, key, error);
  if (holder === null || holder === "foreign") return `The title "${title}" is already in use; choose another title.`;
  return `The title "${title}" is already used by an earlier session of this chat (${holder}); /resume ${holder} brings it back, or choose another title.`;
}

/**
 * The message of an error for a chat reply: a conflict with a session of another chat is told
 * without that session's id; everything else as it is.
 *
 * @example
 * await chatSafeErrorText(db, key, new ConflictError("… used by session 2026…", { sessionId: "2026…" }));
 * // "… used by another chat's session …"
 */
export async function chatSafeErrorText(db: ConflictHolderReader, key: string, error: unknown): Promise<string> {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof ConflictError) || (await ownHolder(db, key, error)) !== "foreign") return message;
  const id = error.sessionId!;
  return message.replaceAll(`session ${id}`, "another chat's session").replaceAll(id, "another chat's session");
}
