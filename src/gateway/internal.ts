/**
 * What the other folders of this package use from the gateway beyond its public API
 * (`./index.ts`, `threadline/gateway`). Not a package entry point: nothing here is
 * public, so it may change in any release.
 *
 * @module
 */
export * from "./index.js";
export { hashIdentifier } from "./session-context.js";
export { PHONE_NUMBER_PLATFORMS, redactLogFields, redactingLogger, urlOriginForLog } from "./log-redaction.js";
export { newRouteFields } from "./session-router.js";
export { SETHOME_IN_TERMINAL_HELP, PAIR_IN_TERMINAL_HELP } from "./slash-commands.js";
export { lifecycleConfigProblems } from "./lifecycle-config.js";
