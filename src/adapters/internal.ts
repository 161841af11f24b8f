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
