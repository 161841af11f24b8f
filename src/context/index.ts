/**
 * Context as a token budget: counting tokens, the models' context windows, and building a
 * request's messages within a budget. Pure logic and functions taking a `SessionDB`; the
 * gateway, the CLI and the library use it, it uses only the storage core.
 *
 * @module
 */
export { ESTIMATE_MARGIN, IMAGE_PART_TOKENS, MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, encodingForModel, tokenCounterFor, type TokenCounter, type TokenEncoding } from "./token-count.js";
export { CALIBRATED_SESSIONS, MAX_CORRECTION, TokenCalibration } from "./token-calibration.js";
export {
  DEFAULT_CONTEXT_WINDOW,
  MIN_CONTEXT_WINDOW,
  checkContextWindow,
  contextWindowFor,
  knownContextWindow,
  type ContextWindow,
  type ContextWindowSource,
} from "./context-windows.js";
export {
  DEFAULT_TOKEN_CACHE_ENTRIES,
  MessageTokenCache,
  TRUNCATION_MARKER,
  buildContext,
  type BuiltContext,
  type ContextBudgetOptions,
  type SessionTally,
} from "./context-builder.js";
export { DEFAULT_RESERVED_OUTPUT_TOKENS, reservedOutputTokens, requestBudget, type RequestBudgetInput } from "./request-budget.js";
