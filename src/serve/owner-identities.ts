/**
 * The gateway's owner (`gateway.owner`): the operator's ids per platform. The owner's
 * sessions on every platform are one person's, so a single-user setup recalls its Telegram
 * talk from the terminal, and strangers still see nothing of it.
 *
 * @module
 */
import { chatPlatformNames, osUserName } from "../adapters/internal.js";
import type { OwnerIdentities } from "../tools/index.js";
import { closestNames } from "./config-keys.js";
import type { ServeConfig } from "./serve-config.js";

/** Platforms `gateway.owner` can name: the chat platforms, the api-server, the webhook and the terminal (`cli`). */
export function ownerPlatforms(): readonly string[] {
  return [...chatPlatformNames(), "api-server", "webhook", "cli"];
}

/** `null` for a platform of {@link ownerPlatforms}; else what is wrong, with the closest names. */
export function unknownOwnerPlatform(platform: string): string | null {
  const platforms = ownerPlatforms();
  if (platforms.includes(platform)) return null;
  const close = closestNames(platform, platforms);
  return (
    `unknown platform ${JSON.stringify(platform)}.${close.length === 0 ? "" : ` Did you mean ${close.map((name) => `"${name}"`).join(" or ")}?`}` +
    ` The owner can be listed on: ${platforms.join(", ")}.`
  );
}

/**
 * The owner's identities as `session_search` uses them, or `undefined` without
 * `gateway.owner`. When `gateway.owner` names no `cli` id, the terminal user is the
 * operating-system user running threadline (`threadline chat` stores that name as the user
 * of its sessions): the person who can open the database from this account is the operator.
 *
 * @example
 * ownerIdentities(config); // { telegram: ["123456789"], cli: ["alice"] }
 */
export function ownerIdentities(config: Pick<ServeConfig, "gateway">, terminalUser: () => string = osUserName): OwnerIdentities | undefined {
  const owner = config.gateway.owner;
  if (Object.keys(owner).length === 0) return undefined;
  return owner["cli"] === undefined ? { ...owner, cli: [terminalUser()] } : owner;
}

/**
 * The config's home channels with the owner's first id on a platform as the `userId` of a
 * home that names none: whose lane a handoff continues in a chat with a session per person.
 * A home with its own `userId` keeps it.
 */
export function homesWithOwner<H extends { userId: string | null }>(
  homes: Readonly<Record<string, H>>,
  owner: Readonly<Record<string, readonly string[]>>,
): Record<string, H> {
  return Object.fromEntries(
    Object.entries(homes).map(([platform, home]) => {
      const id = owner[platform]?.[0];
      return [platform, home.userId === null && id !== undefined ? { ...home, userId: id } : home];
    }),
  );
}
