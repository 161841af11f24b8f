/**
 * Context as a token budget: counting tokens, the models' context windows, building a
 * request's messages within a budget, and compression of long sessions into continuation
 * sessions (settings, the pure cut plan, `compressSession`). Pure logic and functions taking
 * a `SessionDB`; the gateway, the CLI, the server and `serve` import it, never back.
 *
 * @module
 */
export {
  ESTIMATE_MARGIN,
  IMAGE_PART_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  encodingForModel,
  tokenCounterFor,
  type TokenCounter,
  type TokenEncoding,
} from "./token-count.js";
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
export {
  COMPRESSION_EXPECTED,
  COMPRESSION_KEYS,
  DEFAULT_COMPRESSION_SETTINGS,
  LARGE_WINDOW_TOKENS,
  effectiveThreshold,
  resolveCompressionSettings,
  thresholdTokens,
  type CompressionSettings,
} from "./compression-settings.js";
export { planCompression, TAIL_SOFT_CEILING, type CompressionPlan, type PlanMessage, type PlanOptions } from "./compression-plan.js";
export {
  CONTINUATION_ATTEMPTS,
  SUMMARY_INSTRUCTION_START,
  buildContinuation,
  cleanFocus,
  compressSession,
  draftCompression,
  droppedSummaryText,
  summaryPromptMessages,
  type CompressSessionOptions,
  type CompressSessionResult,
  type CompressionDraft,
  type CompressionStore,
  type Continuation,
  type DraftOptions,
  type SummaryRequest,
  type Summarizer,
} from "./compress-session.js";
