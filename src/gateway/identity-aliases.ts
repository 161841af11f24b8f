/**
 * Identity aliases: one person reported under several identifiers (a WhatsApp phone JID
 * and a LID, device suffixes, a leading `+`) resolves to one canonical id, so all of
 * them land on one session key. The registry lives in the database (one namespace per
 * platform); this module normalises ids before they reach it.
 *
 * @module
 */
import type { AliasStore } from "../store/index.js";
import { normalizeIdentity } from "./session-key.js";
import type { SessionSource } from "./session-source.js";

/**
 * The alias registry of a gateway.
 *
 * @example
 * const aliases = new IdentityAliases(db);
 * await aliases.record("whatsapp", "15551234567@s.whatsapp.net", "999999999999999@lid");
 * await aliases.resolve("whatsapp", "+999999999999999"); // "15551234567"
 */
export class IdentityAliases {
  readonly #db: AliasStore;
  /** `platform\0a\0b` pairs already recorded by {@link IdentityAliases.learn} in this process. */
  readonly #learned = new Set<string>();

  constructor(db: AliasStore) {
    this.#db = db;
  }

  /** Records that two identifiers of `platform` name one person; returns the canonical id. */
  async record(platform: string, a: string, b: string): Promise<string> {
    return this.#db.recordAlias(platform, normalizeIdentity(platform, a), normalizeIdentity(platform, b));
  }

  /**
   * Records the two identifiers a platform reports for one sender (`userId` and
   * `userIdAlt`: a WhatsApp phone number and its business-scoped user id, a Signal number
   * and its UUID) as one person, so a later message that carries only one of them lands in
   * the same session. Each pair is written once per process; a source without both ids,
   * or with equal ones, changes nothing.
   */
  async learn(source: SessionSource): Promise<void> {
    const { platform, userId, userIdAlt } = source;
    if (!userId || !userIdAlt) return;
    const a = normalizeIdentity(platform, userId);
    const b = normalizeIdentity(platform, userIdAlt);
    if (a === b) return;
    const pair = `${platform}\u0000${a}\u0000${b}`;
    if (this.#learned.has(pair)) return;
    await this.#db.recordAlias(platform, a, b);
    if (this.#learned.size >= 10_000) this.#learned.clear();
    this.#learned.add(pair);
  }

  /** The canonical form of an identifier (normalised, then resolved through recorded aliases). */
  async resolve(platform: string, id: string): Promise<string> {
    return this.#db.resolveAlias(platform, normalizeIdentity(platform, id));
  }

  /** Every id of the person `id` names: the canonical id first, then its recorded aliases (one read). */
  async group(platform: string, id: string): Promise<string[]> {
    return this.#db.listAliases(platform, normalizeIdentity(platform, id));
  }

  /**
   * The source with its person identifiers in canonical form: `userId`, `userIdAlt` and,
   * in a DM (where the chat is the person), `chatId`. Group chat ids are kept as given.
   * The caller's object is not changed.
   */
  async canonicalizeSource(source: SessionSource): Promise<SessionSource> {
    const out: SessionSource = { ...source };
    // A DM's chat id is usually its user id: each distinct id is looked up once.
    const resolved = new Map<string, Promise<string>>();
    const resolve = (id: string): Promise<string> => {
      let pending = resolved.get(id);
      if (pending === undefined) {
        pending = this.resolve(source.platform, id);
        resolved.set(id, pending);
      }
      return pending;
    };
    if (source.userId) out.userId = await resolve(source.userId);
    if (source.userIdAlt) out.userIdAlt = await resolve(source.userIdAlt);
    if (source.chatType === "dm" && source.chatId) out.chatId = await resolve(source.chatId);
    return out;
  }
}
