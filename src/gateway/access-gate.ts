/**
 * The access gate: one step of the inbound flow, before anything is stored, shared by every
 * chat platform. It applies `adapters.<platform>.access` ({@link decideAccess}) to the
 * sender of each message; in `pairing` mode it asks the store for a pairing code for an
 * unknown sender in a DM and sends them exactly one short reply with it. Their message is
 * neither answered nor stored. A request within 10 minutes of the person's last one, or
 * while 3 codes are pending on the platform, gets no reply at all (so the bot cannot be
 * made to spam, and a stranger learns nothing). Codes are never logged.
 *
 * Platforms without settings here (api-server, webhook, local, cli: their callers are
 * authenticated by the adapter) are let through, and their callers count as admins.
 *
 * @module
 */
import type { PairingApproveOutcome, PairingCodeOutcome } from "../store/index.js";
import type { InboundMessage } from "./adapter.js";
import { decideAccess, pairingCodeText, type PlatformAccess } from "./access-policy.js";
import type { GatewayLogger } from "./gateway-logger.js";
import type { IdentityAliases } from "./identity-aliases.js";
import { normalizeIdentity } from "./session-key.js";
import type { SessionSource } from "./session-source.js";

/** The pairing part of the store the gate uses (a `SessionDB` has it). */
export interface PairingGateStore {
  requestPairingCode(platform: string, userId: string, opts?: { userName?: string | null; chatId?: string | null; now?: number }): Promise<PairingCodeOutcome>;
  approvePairingCode(platform: string, code: string, opts?: { by?: string | null; now?: number }): Promise<PairingApproveOutcome>;
  isPairingApproved(platform: string, userId: string): Promise<boolean>;
}

/** Options of an {@link AccessGate}. */
export interface AccessGateOptions {
  /** The access settings of each chat platform (absent platforms are let through). */
  access: Readonly<Record<string, PlatformAccess>>;
  store: PairingGateStore;
  aliases: IdentityAliases;
  /** Sends the pairing reply to the sender's chat. */
  reply: (source: SessionSource, text: string, inReplyTo: string[]) => Promise<void>;
  logger: GatewayLogger;
}

/** What the gate decided about one message. */
export type GateOutcome = { pass: true } | { pass: false; reason: "pairing-code-sent" | "pairing-no-reply" | "not-allowed" };

/**
 * Decides who may talk to the agent.
 *
 * @example
 * const gate = new AccessGate({ access: { telegram: { mode: "pairing", allowedUsers: [], allowedChats: [], admins: ["42"] } }, store: db, aliases, reply, logger });
 * await gate.check(message); // { pass: false, reason: "pairing-code-sent" } for a stranger's DM
 */
export class AccessGate {
  readonly #access: Readonly<Record<string, PlatformAccess>>;
  readonly #store: PairingGateStore;
  readonly #aliases: IdentityAliases;
  readonly #reply: AccessGateOptions["reply"];
  readonly #log: GatewayLogger;

  constructor(options: AccessGateOptions) {
    this.#access = options.access;
    this.#store = options.store;
    this.#aliases = options.aliases;
    this.#reply = options.reply;
    this.#log = options.logger;
  }

  /** The access settings of a platform (`undefined`: not a gated platform). */
  settingsOf(platform: string): PlatformAccess | undefined {
    return Object.hasOwn(this.#access, platform) ? this.#access[platform] : undefined;
  }

  /** Applies the platform's access mode to a message; sends the pairing reply when one is due. */
  async check(message: InboundMessage): Promise<GateOutcome> {
    const source = message.source;
    const settings = this.settingsOf(source.platform);
    if (settings === undefined) return { pass: true };
    const ids = await this.#senderIds(source);
    const decision = await decideAccess(settings.mode, {
      chatType: source.chatType,
      listed: matches(source.platform, settings.allowedUsers, ids),
      admin: matches(source.platform, settings.admins, ids),
      chatAllowed: [source.chatId, source.chatIdAlt, source.threadId, source.parentChatId].some(
        (id) => typeof id === "string" && id !== "" && settings.allowedChats.includes(id),
      ),
      approved: async () => {
        for (const id of ids) if (await this.#store.isPairingApproved(source.platform, id)) return true;
        return false;
      },
    });
    if (decision === "allow") return { pass: true };
    if (decision === "drop" || ids.length === 0) {
      this.#log.debug?.({ platform: source.platform, chatType: source.chatType }, "access: a message from a sender who is not allowed here was dropped");
      return { pass: false, reason: "not-allowed" };
    }
    const outcome = await this.#store.requestPairingCode(source.platform, ids[0]!, { userName: source.userName ?? null, chatId: source.chatId ?? null });
    switch (outcome.kind) {
      case "already-approved":
        return { pass: true };
      case "code":
        // The code goes to the sender only: never into a log line.
        this.#log.info({ platform: source.platform }, "pairing: an unknown sender was sent a pairing code (approve it with `threadline pairing approve`)");
        await this.#reply(source, pairingCodeText(source.platform, outcome.code), message.messageId ? [message.messageId] : []);
        return { pass: false, reason: "pairing-code-sent" };
      case "rate-limited":
      case "too-many-pending":
        this.#log.info(
          { platform: source.platform, outcome: outcome.kind },
          "pairing: an unknown sender's message got no reply (" +
            (outcome.kind === "rate-limited" ? "a code was sent to them within the last 10 minutes" : "3 codes are pending on this platform") +
            ")",
        );
        return { pass: false, reason: "pairing-no-reply" };
    }
  }

  /** Whether the sender is an admin of their platform (callers of ungated platforms are). */
  async isAdmin(source: SessionSource): Promise<boolean> {
    const settings = this.settingsOf(source.platform);
    if (settings === undefined) return true;
    return matches(source.platform, settings.admins, await this.#senderIds(source));
  }

  /**
   * The sender's ids in canonical form (normalised, resolved through identity aliases):
   * the first is the one a pairing code is requested for.
   */
  async #senderIds(source: SessionSource): Promise<string[]> {
    const out = new Set<string>();
    for (const raw of [source.userId, source.userIdAlt]) {
      if (typeof raw !== "string" || raw === "") continue;
      out.add(await this.#aliases.resolve(source.platform, raw));
      out.add(normalizeIdentity(source.platform, raw));
    }
    return [...out];
  }
}

/** Whether one of the sender's ids is in the list (compared in the platform's normal form). */
function matches(platform: string, list: readonly string[], ids: readonly string[]): boolean {
  if (list.length === 0 || ids.length === 0) return false;
  const normal = new Set(list.map((id) => normalizeIdentity(platform, id)));
  return ids.some((id) => normal.has(id) || list.includes(id));
}
