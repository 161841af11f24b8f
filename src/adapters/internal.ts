/**
 * What the other folders of this package use from the adapters beyond their public API
 * (`./index.ts`, `threadline/adapters`). Not a package entry point: nothing here is
 * public, so it may change in any release.
 *
 * @module
 */
export * from "./index.js";
export { CLI_PLATFORM, osUserName } from "./cli-adapter.js";
export { isLoopbackAddress, isLoopbackClient, TrustedProxies, trustProxyEntryProblem, secretsEqual, PROXY_HEADERS } from "../net/index.js";
export { PLATFORMS, chatPlatforms, chatPlatformNames, registerChatPlatform, type ChatPlatformConfigs } from "./platforms.js";
export {
  defineChatPlatform,
  fromEnv,
  secret,
  type ChatPlatform,
  type ChatPlatformConfigOf,
  type ChatPlatformContext,
  type ChatPlatformDefinition,
  type SecretKeys,
} from "./chat-platform.js";
export { CHAT_ACCESS_EXPECTED, adapterAnswerRules, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";
export { LINK_PREVIEWS_EXPECTED, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "./link-previews.js";
export type { TelegramConfig } from "./telegram/telegram-platform.js";
export type { DiscordConfig } from "./discord/discord-platform.js";
export type { SlackConfig } from "./slack/slack-platform.js";
export type { WhatsAppConfig } from "./whatsapp/whatsapp-platform.js";
export type { MatrixConfig } from "./matrix/matrix-platform.js";
export type { SignalConfig } from "./signal/signal-platform.js";
