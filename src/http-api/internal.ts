/**
 * What the other folders of this package use from the HTTP server beyond its public API
 * (`./index.ts`, `threadline/server`). Not a package entry point: nothing here is public,
 * so it may change in any release.
 *
 * @module
 */
export * from "./index.js";
export { isLoopbackHost } from "./auth.js";
export { crossSiteRefusal, guardRequests, hostNamesFor, hostRefusal, hostnameAllowed, normaliseHostname, type HostNames } from "./request-guard.js";
export { MAX_LIVE_ROWS } from "./gateway-live.js";
export { lazySchemaCompilers, type LazySchemaCompilers } from "./lazy-schema-compilers.js";
