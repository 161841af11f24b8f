/**
 * Whose memory a turn reads and writes: the person speaking (the sender of the message the
 * turn answers), never whoever opened the session. The gateway's owner (`gateway.owner`) is
 * one person on every platform (`{ platform: "owner", userId: "owner" }`); anyone else is
 * their platform and canonical (alias-resolved) user id, so their linked ids share one memory.
 * A speaker without a user id (a resumed turn in a group) has no memory: nothing is read or
 * written for them.
 *
 * @module
 */
import type { TurnSpeaker } from "../agents/index.js";
import { IdentityAliases } from "../gateway/index.js";
import type { AliasStore, MemoryOwner, SessionHistory } from "../store/index.js";
import { idsOfPerson, speakerOfSession, type OwnerIdentities } from "./search-scope.js";

/** The memory owner of the gateway's owner (every platform of `gateway.owner`). */
export const OWNER_MEMORY: MemoryOwner = Object.freeze({ platform: "owner", userId: "owner" });

/** Whether `speaker` (with the ids of their person) is one of the owner's identities on their platform. */
async function isOwner(db: AliasStore, speaker: TurnSpeaker & { userId: string }, owner: OwnerIdentities | undefined): Promise<boolean> {
  const listed = owner?.[speaker.platform];
  if (listed === undefined || listed.length === 0) return false;
  const ownIds = new Set<string>();
  for (const id of listed) for (const alias of await idsOfPerson(db, speaker.platform, id)) ownIds.add(alias);
  const ids = [speaker.userId, ...speaker.aliases, ...(await idsOfPerson(db, speaker.platform, speaker.userId))];
  return ids.some((id) => ownIds.has(id));
}

/**
 * The memory owner of a speaker: {@link OWNER_MEMORY} for the gateway's owner (`owner`: the
 * operator's ids per platform), else `{ platform, userId: canonical id }`; `null` when the
 * speaker is unknown (no speaker, or no user id).
 *
 * @example
 * await memoryOwnerFor(db, { platform: "telegram", userId: "42", aliases: ["42"], chatType: "dm", chatId: "42" });
 * // { platform: "telegram", userId: "42" }
 */
export async function memoryOwnerFor(db: AliasStore, speaker: TurnSpeaker | null | undefined, owner?: OwnerIdentities): Promise<MemoryOwner | null> {
  if (speaker === null || speaker === undefined || speaker.userId === null || speaker.userId === "") return null;
  const known = { ...speaker, userId: speaker.userId };
  if (await isOwner(db, known, owner)) return { ...OWNER_MEMORY };
  return { platform: speaker.platform, userId: await new IdentityAliases(db).resolve(speaker.platform, speaker.userId) };
}

/**
 * The memory owner of a tool call: the call's `speaker` when the gateway gave one; without it
 * (a library caller running an agent outside a gateway), the session's stored user on its
 * source stands in (as for `session_search`). `null` when nobody known is speaking.
 */
export async function memoryOwnerOfCall(
  db: AliasStore & SessionHistory,
  sessionId: string,
  speaker: TurnSpeaker | undefined,
  owner?: OwnerIdentities,
): Promise<MemoryOwner | null> {
  return memoryOwnerFor(db, speaker ?? (await speakerOfSession(db, sessionId)), owner);
}
