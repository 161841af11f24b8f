/**
 * What the other folders of this package use from the tools beyond their public API
 * (`./index.ts`, `threadline/tools`). Not a package entry point: nothing here is public,
 * so it may change in any release.
 *
 * @module
 */
export * from "./index.js";
export { MAX_SESSION_SEARCH_LIMIT } from "./session-search.js";
