/**
 * `threadline/gateway`: the gateway session lifecycle — message origins, session keys,
 * routing entries and their reset policies, restart recovery, durable per-session
 * queues, the model's session context (with PII redaction), the expiry watcher and
 * the agent cache — and the running gateway built on it: {@link GatewayRunner}, the
 * {@link Adapter} interface, slash commands and handoffs. Works on any {@link SessionDB}
 * backend.
 *
 * The list is explicit: what other folders of this package share beyond it is in
 * `./internal.ts`, which is not an entry point. docs/api.md lists every export.
 *
 * @module
 */

// Clocks.
export { systemClock, ManualClock, type Clock } from "./clock.js";

// Message sources and session keys.
export {
  parseSessionSource,
  describeSessionSource,
  CHAT_TYPES,
  KNOWN_PLATFORMS,
  type SessionSource,
  type ChatType,
} from "./session-source.js";
export {
  buildSessionKey,
  isSharedMultiUserSession,
  escapeKeyComponent,
  normalizeIdentity,
  assertSafeKey,
  assertSafeSessionId,
  SESSION_ID_PATTERN,
  type KeySettings,
} from "./session-key.js";
export { IdentityAliases } from "./identity-aliases.js";

// Routing entries and the routing store.
export { toSessionEntry, hadActivity, type SessionEntry, type ResetNotice } from "./session-entry.js";
export { SessionRouter, type SessionRouterOptions, type GetOrCreateOptions, type StartTurnOptions, type GatewayDB } from "./session-router.js";
export { SessionStore, type SessionStoreOptions } from "./session-store.js";

// Reset policies and the config file.
export {
  parseResetConfig,
  resolveResetPolicy,
  evaluateReset,
  dailyBoundary,
  resetUserNotice,
  resetModelNotice,
  shouldNotifyUser,
  formatInactivity,
  RESET_MODES,
  type ResetConfig,
  type ResetPolicy,
  type ResetMode,
  type ResetDecision,
} from "./reset-policy.js";
export { readConfigFile, parseLifecycleConfig, defaultConfigPath, type LifecycleConfig } from "./lifecycle-config.js";

// Queues, recovery, expiry, the agent cache.
export { SessionQueue, type InboundEvent, type QueueOutcome, type QueueSnapshot } from "./session-queue.js";
export { GatewayRecovery, type GatewayRecoveryOptions, type StartupReport } from "./recovery.js";
export { InboundBuffer } from "./inbound-buffer.js";
export {
  ExpiryWatcher,
  type ExpiryWatcherOptions,
  type ExpiryPass,
  type SessionFinalizeHook,
  type BeforeResetOptions,
} from "./expiry-watcher.js";
export { AgentCache, type AgentCacheOptions } from "./agent-cache.js";

// The model's session context.
export { buildSessionContext, buildSessionContextPrompt, type SessionContext, type SessionContextConfig } from "./session-context.js";

// The running gateway and its adapters.
export { GatewayRunner, type GatewayRunnerOptions, type GatewayMetrics, type DrainResult } from "./gateway-runner.js";
export { leaseHolderName, staleHolderTest, type LeaseHolderIdentity, type StaleHolderTest } from "./stale-leases.js";
export { defaultContextWindows, droppedNote, type ContextMeasure, type ContextWindowResolver } from "./turn-context.js";
export { SessionCompressor, compressionLeaseKey, type CompressorHost, type SessionCompressorOptions, type CompressOutcome } from "./session-compressor.js";
export { noopLogger, type GatewayLogger } from "./gateway-logger.js";
export type {
  Adapter,
  AdapterEvents,
  ReceiverHandlers,
  ReceiverLease,
  DeliveryFailure,
  InboundMessage,
  InboundMedia,
  MediaFetchRequest,
  FetchedMedia,
  InboundHandler,
  InboundAck,
  OutboundMessage,
  OutboundDelta,
} from "./adapter.js";
export { MediaUnavailableError } from "./adapter.js";
export type { MediaSettings } from "../media/index.js";
export { adapterStateInMeta, adapterStateInMemory, type AdapterStateStore } from "./adapter-state.js";
export {
  INTERRUPTED_TOOL_RESULT,
  userMessagesOf,
  closeOpenToolCalls,
  missingToolResults,
  textOf,
  replyTextOf,
  failedTurnRecord,
  isFailedTurnRecord,
} from "./turn-messages.js";
export {
  SLASH_COMMANDS,
  parseSlashCommand,
  isGatewayCommand,
  runSlashCommand,
  type SlashCommand,
  type CommandHost,
} from "./slash-commands.js";

// Cross-platform handoff.
export {
  requestHandoff,
  HandoffError,
  type RequestHandoffOptions,
  type HandoffRequest,
  type HandoffOutcome,
  type HandoffFailure,
  type HomeChannel,
  type HomeChannels,
} from "./handoff.js";
export { effectiveHomeChannels } from "./home-channels.js";
export { decideAccess, pairingCodeText, type AccessMode, type PlatformAccess, type AccessFacts, type AccessDecision } from "./access-policy.js";
export { AccessGate, type AccessGateOptions, type PairingGateStore, type GateOutcome } from "./access-gate.js";
export type { ProcessHandoffsOptions } from "./handoff-worker.js";
