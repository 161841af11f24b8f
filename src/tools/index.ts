/**
 * Tools agents can call: `session_search` over earlier conversations.
 *
 * @module
 */
export * from "./session-search.js";
export * from "./search-scope.js";
