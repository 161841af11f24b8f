/**
 * `threadline/adapters`: the shipped platform adapters — `local` (in-process),
 * `api-server` (OpenAI-compatible HTTP), `webhook` (signed JSON in, signed callbacks out)
 * and `cli` (the terminal of `threadline chat`) — and the pieces every chat-platform
 * adapter shares (`chat/`). The chat-platform adapters themselves (`telegram/`, …) are not
 * exported: they load their SDK, so `threadline serve` imports them with `import()` only
 * when configured.
 *
 * The list is explicit: what other folders of this package share beyond it is in
 * `./internal.ts`, which is not an entry point. docs/api.md lists every export.
 *
 * @module
 */

// The shipped adapters.
export { LocalAdapter, type LocalDelivery } from "./local-adapter.js";
export { CliAdapter, type CliAdapterOptions, type CliDelivery } from "./cli-adapter.js";
export { ApiServerAdapter, type ApiServerAdapterOptions, type ApiServerModels, type ApiServerTokenEntry } from "./api-server-adapter.js";
export {
  WebhookAdapter,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_TOLERANCE_SECONDS,
  signWebhook,
  webhookSignatureProblem,
  type WebhookAdapterOptions,
} from "./webhook-adapter.js";
export { signBody, signatureMatches } from "../net/index.js";

// For adapter authors: the pieces every chat adapter shares (docs/platforms.md).
export {
  splitMessage,
  TypingIndicator,
  SeenMessageIds,
  decideAnswer,
  DEFAULT_ANSWER_RULES,
  redactError,
  redactText,
  loadSdk,
  connectInBackground,
  abortableSleep,
  listLines,
  tableLines,
  wrapMarkers,
  mediaKindOf,
  downloadPlatformFile,
  FileDownloadError,
  httpOrigin,
  onAllowedOrigin,
  type PlatformDownload,
  type SplitOptions,
  type TypingIndicatorOptions,
  type AnswerRules,
  type AnswerCandidate,
  type AnswerDecision,
  type ConnectInBackgroundOptions,
  type MarkdownParser,
} from "./chat/index.js";
