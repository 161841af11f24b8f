/**
 * `threadline/serve`: the `threadline serve` composition root — the config file, metrics,
 * and starting/stopping a complete gateway (adapters, agent, HTTP server) in a process of
 * your own.
 *
 * The list is explicit: what other folders of this package share beyond it is in
 * `./internal.ts`, which is not an entry point. docs/api.md lists every export.
 *
 * @module
 */

// Starting a gateway.
export { startGateway, type StartGatewayOptions, type RunningGateway } from "./start-gateway.js";
export { createGatewayMetrics, type GatewayMetricsBundle } from "./gateway-metrics.js";

// The config file.
export { parseServeConfig, type ServeConfig, type ApiConfig, type ApiServerToken } from "./serve-config.js";
export { configFileDocument } from "./config-file-document.js";
export { CONFIG_KEY_PATHS, suggestConfigKeys, type ConfigKeySuggestion } from "./config-keys.js";
export { SECRET_CONFIG_KEYS, chatAdapterProblems, type ChatAdaptersConfig } from "./chat-config.js";
export {
  PLATFORMS,
  type ChatPlatform,
  type ChatPlatformContext,
  type ChatPlatformConfigs,
  type ChatPlatformConfigOf,
  type ChatAccess,
  type TelegramConfig,
  type DiscordConfig,
  type SlackConfig,
  type WhatsAppConfig,
  type MatrixConfig,
  type SignalConfig,
  type LinkPreviewsConfig,
} from "../adapters/internal.js";
