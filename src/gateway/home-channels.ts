/**
 * Home channels set from a chat with `/sethome`: stored in the database (one meta entry,
 * `home_channels`, a JSON map of platform → {@link HomeChannel}) so every gateway replica
 * and the terminal's `/handoff` see them. The config file's `homeChannels.<platform>` wins
 * over a stored one: what the operator wrote is not replaced from a chat (and `/sethome` is
 * refused, with a reply that says so, on a platform whose home channel is in the file).
 *
 * @module
 */
import type { MetaStore } from "../store/index.js";
import type { HomeChannel, HomeChannels } from "./handoff.js";

/** The meta key holding the home channels set with `/sethome`. */
export const HOME_CHANNELS_META_KEY = "home_channels";

const HOME_CHAT_TYPES: ReadonlySet<unknown> = new Set(["dm", "group", "channel"]);

function isHome(value: unknown): value is HomeChannel {
  return typeof value === "object" && value !== null && typeof (value as HomeChannel).chatId === "string" && (value as HomeChannel).chatId !== "";
}

/** A stored home channel with only the fields it may have (a damaged `chatType` or `userId` reads as absent). */
function cleanHome(home: HomeChannel): HomeChannel {
  const out: HomeChannel = { chatId: home.chatId };
  if (typeof home.name === "string") out.name = home.name;
  if (typeof home.threadsSupported === "boolean") out.threadsSupported = home.threadsSupported;
  if (HOME_CHAT_TYPES.has(home.chatType)) out.chatType = home.chatType!;
  if (typeof home.userId === "string" && home.userId !== "") out.userId = home.userId;
  return out;
}

/** The home channels set with `/sethome` (a damaged entry reads as none). */
export async function storedHomeChannels(db: MetaStore): Promise<HomeChannels> {
  const raw = await db.getMeta(HOME_CHANNELS_META_KEY);
  if (raw === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return {};
  }
  const out: HomeChannels = {};
  if (typeof parsed !== "object" || parsed === null) return out;
  for (const [platform, home] of Object.entries(parsed as Record<string, unknown>)) {
    if (isHome(home)) Object.defineProperty(out, platform, { value: cleanHome(home), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Makes `home` the home channel of `platform` (replacing any earlier one). */
export async function setHomeChannel(db: MetaStore, platform: string, home: HomeChannel): Promise<void> {
  const current = await storedHomeChannels(db);
  Object.defineProperty(current, platform, { value: home, enumerable: true, writable: true, configurable: true });
  await db.setMeta(HOME_CHANNELS_META_KEY, JSON.stringify(current));
}

/** The stored home channels (from `/sethome`) with the configured ones laid over them (the config file wins). */
export async function effectiveHomeChannels(db: MetaStore, configured: HomeChannels = {}): Promise<HomeChannels> {
  const out: HomeChannels = {};
  for (const [platform, home] of [...Object.entries(await storedHomeChannels(db)), ...Object.entries(configured ?? {})]) {
    Object.defineProperty(out, platform, { value: home, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
