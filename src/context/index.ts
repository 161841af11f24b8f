/**
 * Context: token counting, the calibration of counts against what the provider reports,
 * and compression of long sessions into continuation sessions (settings, the pure cut plan,
 * `compressSession`). Pure logic and functions taking a `SessionDB`; the gateway, the CLI,
 * the server and `serve` import it, never the other way round.
 *
 * @module
 */
export { tokenCounterFor, encodingForModel, ESTIMATE_MARGIN, MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, IMAGE_PART_TOKENS, type TokenCounter, type TokenEncoding } from "./token-count.js";
export { TokenCalibration } from "./token-calibration.js";
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
  DEFAULT_COMPRESSION_CONTEXT_WINDOW,
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
