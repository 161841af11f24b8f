/**
 * The platforms a home channel can be on: those `threadline serve` connects that can send to
 * a chat unprompted (a handoff's summary, deliveries). A name outside the list (`telegarm`) is
 * refused where it is typed: `homeChannels.<platform>` in the config file and `/handoff
 * <platform>` in the terminal, with the closest name.
 *
 * @module
 */
import { chatPlatformNames } from "../adapters/internal.js";
import { closestNames } from "./config-keys.js";

/** Platforms a home channel (and so a handoff) can be on: every chat platform, and the webhook. */
export function homeChannelPlatforms(): readonly string[] {
  return [...chatPlatformNames(), "webhook"];
}

/**
 * `null` for a platform of {@link homeChannelPlatforms}; else what is wrong, with the closest
 * names: `unknown platform "telegarm". Did you mean "telegram"?` (no "; " inside).
 */
export function unknownHomePlatform(platform: string): string | null {
  const platforms = homeChannelPlatforms();
  if (platforms.includes(platform)) return null;
  const close = closestNames(platform, platforms);
  return `unknown platform ${JSON.stringify(platform)}.${close.length === 0 ? "" : ` Did you mean ${close.map((name) => `"${name}"`).join(" or ")}?`}`;
}
