/**
 * The chat platforms `threadline serve` knows: {@link PLATFORMS}, one line per platform. The
 * config file (`adapters.<platform>`, `gateway.admins`, `gateway.owner`, `homeChannels`),
 * `threadline config show`/`check` and the gateway's start-up loop over it, so a new platform
 * is its folder, its descriptor (`<platform>/<platform>-platform.ts`, see `chat-platform.ts`)
 * and its line here (docs/architecture.md, "Adding a platform").
 *
 * Importing this module loads no SDK: each descriptor imports its adapter with `import()`.
 *
 * @module
 */
import { InvalidInputError } from "../store/errors.js";
import type { ChatPlatform, ChatPlatformConfigOf } from "./chat-platform.js";
import { discordPlatform } from "./discord/discord-platform.js";
import { matrixPlatform } from "./matrix/matrix-platform.js";
import { signalPlatform } from "./signal/signal-platform.js";
import { slackPlatform } from "./slack/slack-platform.js";
import { telegramPlatform } from "./telegram/telegram-platform.js";
import { whatsappPlatform } from "./whatsapp/whatsapp-platform.js";

/** The chat platforms of `threadline serve`, in the order lists and problems name them. */
export const PLATFORMS = [telegramPlatform, discordPlatform, slackPlatform, whatsappPlatform, matrixPlatform, signalPlatform] as const;

/** The resolved `adapters.<platform>` section of each platform of {@link PLATFORMS} (`null`: not configured). */
export type ChatPlatformConfigs = { [P in (typeof PLATFORMS)[number] as P["name"]]: ChatPlatformConfigOf<P> | null };

const registered: ChatPlatform[] = [];

/**
 * Adds a platform after those of {@link PLATFORMS} for this process, and returns the function
 * that removes it again. The seam for a platform that is not in the list (a test's tiny
 * platform, test/serve/platform-registry.test.ts): everything that loops over
 * {@link chatPlatforms} sees it from then on. A platform of the product gets its line in
 * {@link PLATFORMS} instead.
 *
 * @throws {InvalidInputError} when a platform of that name is known already.
 */
export function registerChatPlatform(platform: ChatPlatform): () => void {
  if (chatPlatforms().some((p) => p.name === platform.name)) {
    throw new InvalidInputError(`a chat platform named ${JSON.stringify(platform.name)} is known already; give the platform another name.`, { field: "name" });
  }
  registered.push(platform);
  return () => {
    const at = registered.indexOf(platform);
    if (at >= 0) registered.splice(at, 1);
  };
}

/** Every chat platform: {@link PLATFORMS}, then those added with {@link registerChatPlatform}. */
export function chatPlatforms(): readonly ChatPlatform[] {
  return [...PLATFORMS, ...registered];
}

/** The names of {@link chatPlatforms}, in order. */
export function chatPlatformNames(): string[] {
  return chatPlatforms().map((p) => p.name);
}
