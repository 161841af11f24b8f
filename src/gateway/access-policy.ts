/**
 * Who may talk to the agent on a chat platform: the pure decision of the access gate
 * ({@link decideAccess}), shared by every platform. The adapters keep their own rules
 * (their own messages, other bots, mentions in groups); this decides about the person.
 *
 * - `open`: everyone.
 * - `allowlist`: the adapter already dropped everyone not in `allowedUsers` (or an admin),
 *   as before pairing existed; what reaches the gateway is let through.
 * - `pairing`: listed users, admins, approved people and chats in `allowedChats` are let
 *   through. An unknown sender in a DM is offered a pairing code; in a group, channel or
 *   thread they are dropped silently (codes are sent in DMs only, so a group never sees one).
 *
 * @module
 */
import type { ChatType } from "./session-source.js";

/** How a chat platform decides who may talk to the agent (`adapters.<platform>.access`). */
export type AccessMode = "pairing" | "allowlist" | "open";

/** The access settings of one platform, resolved (ids as the platform reports them). */
export interface PlatformAccess {
  mode: AccessMode;
  /** Always allowed (no pairing needed). */
  allowedUsers: readonly string[];
  /** In `pairing` mode: chats where everyone is answered. */
  allowedChats: readonly string[];
  /** May `/sethome`, `/pair approve` and `/resume` other chats' sessions; always allowed. */
  admins: readonly string[];
}

/** What the gate knows about one inbound message's sender. */
export interface AccessFacts {
  chatType: ChatType;
  /** The sender is in `allowedUsers`. */
  listed: boolean;
  /** The sender is an admin of the platform. */
  admin: boolean;
  /** The chat (or the thread, or its parent chat) is in `allowedChats`. */
  chatAllowed: boolean;
  /** Whether the sender's pairing was approved; asked only when needed. */
  approved: () => Promise<boolean>;
}

/** What to do with a message: let it through, offer the sender a pairing code, or drop it. */
export type AccessDecision = "allow" | "offer-code" | "drop";

/**
 * Applies a platform's access mode to one message's sender.
 *
 * @example
 * ```ts
 * await decideAccess("pairing", { chatType: "dm", listed: false, admin: false, chatAllowed: false, approved: async () => false });
 * // "offer-code"
 * ```
 */
export async function decideAccess(mode: AccessMode, facts: AccessFacts): Promise<AccessDecision> {
  if (mode !== "pairing") return "allow";
  if (facts.listed || facts.admin || facts.chatAllowed) return "allow";
  if (await facts.approved()) return "allow";
  return facts.chatType === "dm" ? "offer-code" : "drop";
}

/** The text of the one reply a stranger gets: the code and what to do with it. */
export function pairingCodeText(platform: string, code: string): string {
  return (
    `Hi! I only talk to people the owner has let in. Your pairing code is ${code} (valid for 1 hour). ` +
    `Send it to the owner and ask them to run \`threadline pairing approve ${platform} ${code}\`, then message me again.`
  );
}
