/**
 * What the other folders of this package use from `serve` beyond its public API
 * (`./index.ts`, `threadline/serve`). Not a package entry point: nothing here is public, so
 * it may change in any release.
 *
 * @module
 */
export * from "./index.js";
export { chooseAgent, memoryOwnerIdentities } from "./agent-choice.js";
export { homeChannelPlatforms, unknownHomePlatform } from "./home-channel-platforms.js";
export { secretConfigKeys } from "./chat-config.js";
export { configFileProblems } from "./serve-config.js";
