/**
 * Threadline: the session layer for AI agents and chat gateways.
 *
 * The storage contract ({@link SessionDB}), its errors and `openSessionDB`.
 * Backends live in subpath exports (`threadline/sqlite`).
 *
 * @module
 */
export * from "./store/contract.js";
export * from "./store/errors.js";
export { openSessionDB, type OpenSessionDBOptions } from "./store/open-session-db.js";
export { defaultDatabasePath, threadlineHome } from "./store/data-home.js";
export { sanitizeTitle, parseLineageTitle, MAX_TITLE_CODE_POINTS } from "./store/titles.js";
export { RECORD_FORMAT, RECORD_VERSION } from "./store/session-record.js";
export { writeJsonl, readJsonlLines } from "./store/jsonl.js";
