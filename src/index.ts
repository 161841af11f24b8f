/**
 * Threadline (`threadline`): the storage contract ({@link SessionDB}) and the records it reads
 * and writes, its errors, {@link openSessionDB}, the database doctor and a few helpers.
 *
 * Everything else has its own entry point, so importing this one loads no backend and no
 * gateway: `threadline/gateway` (the gateway lifecycle and `GatewayRunner`),
 * `threadline/executions` (agent and workflow runs), `threadline/agents`,
 * `threadline/adapters`, `threadline/tools`, `threadline/server` (the HTTP API),
 * `threadline/serve` (a whole gateway process), and the backends `threadline/sqlite` and
 * `threadline/postgres`. docs/api.md lists every export of each.
 *
 * This list is explicit on purpose: a symbol is public when it is named here (the
 * storage core's other exports in `src/store/index.ts` are for the other folders of
 * this package only). test/package/public-api.test.ts keeps it and docs/api.md in step.
 *
 * @module
 */

// Opening a database, and checking or repairing one.
export { openSessionDB, diagnoseDatabase, repairDatabase } from "./store/index.js";
export type {
  OpenSessionDBOptions,
  DiagnoseOptions,
  DoctorReport,
  MediaDoctorCheck,
  SqliteDoctorReport,
  PostgresDoctorReport,
  RepairReport,
  UnreadableRange,
} from "./store/index.js";

// The contract: the store, the roles it is made of (each layer asks only for the roles it calls),
// its capabilities and paging.
export type {
  SessionDB,
  SessionHistory,
  SessionSearch,
  GatewayState,
  RouteStore,
  AliasStore,
  QueueStore,
  LeaseStore,
  HandoffStore,
  InboundClaimStore,
  ExecutionStore,
  MemoryStore,
  MediaStore,
  MetaStore,
  StoreMaintenance,
  StoreCapabilities,
  Page,
} from "./store/index.js";

// Media: stored blobs and the attachment parts of messages that refer to them.
export { MEDIA_GRACE_SECONDS } from "./store/index.js";
export type {
  AttachmentKind,
  AttachmentRef,
  AttachmentPart,
  StoredMedia,
  SessionAttachment,
  MediaInput,
  PutMediaOptions,
  SweepMediaOptions,
  MissingMedia,
  MediaCheck,
} from "./store/index.js";

// The one implementation of the contract both backends extend (docs/architecture.md).
export { StoreCore } from "./store/index.js";

// Sessions and messages.
export { MESSAGE_ROLES } from "./store/index.js";
export type {
  Session,
  NewSession,
  SessionUpdate,
  SessionUsage,
  UsageUpdate,
  Message,
  NewMessage,
  MessageRole,
  MessageContent,
  ContentPart,
  ToolCall,
  ConversationMessage,
  ConversationOptions,
  MessageWindowOptions,
  FencedWriteOptions,
  RewindResult,
} from "./store/index.js";

// Listing, search, export and import, retention.
export type {
  SessionSummary,
  ListSessionsOptions,
  SearchHit,
  SearchOptions,
  SourceIdentity,
  ContextMessage,
  SessionRecord,
  SessionRecordMedia,
  ExportOptions,
  ExportMediaMode,
  ImportOptions,
  ImportReport,
  ImportProblem,
  PruneOptions,
  AutoPruneOptions,
} from "./store/index.js";

// Stats and insights.
export type {
  StoreStats,
  ModelStats,
  Insights,
  InsightsOptions,
  InsightsDay,
  InsightsSession,
  InsightsTotals,
  ToolUsage,
} from "./store/index.js";

// Gateway routing state: routes, leases, queues, handoffs.
export { HANDOFF_STATUSES, INBOUND_CLAIM_RETENTION_SECONDS } from "./store/index.js";
export type {
  Route,
  RouteFields,
  RouteState,
  RouteWrite,
  ContinuationWrite,
  ListRoutesOptions,
  AliasEntry,
  ListAliasEntriesOptions,
  MetaEntry,
  ListMetaOptions,
  Lease,
  LeaseFence,
  LeaseOptions,
  QueuedItem,
  NewQueuedEvent,
  EnqueueResult,
  InboundClaim,
  ClaimedWrite,
  ClaimInboundOptions,
  PruneInboundClaimsOptions,
  Handoff,
  NewHandoff,
  HandoffStatus,
  HandoffResult,
  ClaimHandoffOptions,
} from "./store/index.js";

// Pairing: who may talk to the agent on a platform (the codes' rules and the stored state).
export { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, PAIRING_LIMITS, generatePairingCode, normalizePairingCode } from "./store/index.js";
export type {
  PairingStore,
  PairingRequest,
  PairingApproval,
  PairingCodeOutcome,
  PairingApproveOutcome,
  PairingCodeRequestOptions,
  PairingApproveOptions,
  ListPairingOptions,
  PairingList,
} from "./store/index.js";

// Memory: a person's bounded notes (hermes' MEMORY.md and USER.md), written by the memory tool.
export { MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT } from "./store/index.js";
export type { MemoryKind, MemoryOwner, MemoryRecord, MemoryWrite, ListMemoriesOptions } from "./store/index.js";

// Execution sessions as stored (the `Executions` API is at `threadline/executions`).
export type {
  ExecutionKind,
  ExecutionRecord,
  ExecutionSummary,
  ExecutionWrite,
  ExecutionChange,
  ExecutionChangeResult,
  FindExecutionsOptions,
  ListExecutionsOptions,
  ListExecutionUnitsOptions,
} from "./store/index.js";

// Errors.
export {
  ThreadlineError,
  InvalidInputError,
  NotFoundError,
  ConflictError,
  StoreBusyError,
  StoreClosedError,
  SchemaVersionError,
  LeaseLostError,
  InboundClaimedError,
  AmbiguousIdError,
  DatabaseCorruptError,
  DriverMissingError,
  StoreError,
  InterruptedError,
  PlatformError,
  InternalError,
  THREADLINE_ERROR_CODES,
} from "./store/index.js";
export type { ThreadlineErrorCode, AmbiguousIdCandidate } from "./store/index.js";

// Helpers: titles, export files, the data home.
export { sanitizeTitle, parseLineageTitle, MAX_TITLE_CODE_POINTS, type LineageTitle, setTitleAvoidingCollision, type TitleRelation } from "./store/index.js";
export { writeJsonl, writeLines, readJsonlLines, RECORD_FORMAT, RECORD_VERSION } from "./store/index.js";
export { threadlineHome, defaultDatabasePath } from "./store/index.js";

// Context as a token budget: counting tokens, the models' windows, a request's messages within a budget.
export {
  tokenCounterFor,
  TokenCalibration,
  contextWindowFor,
  DEFAULT_CONTEXT_WINDOW,
  buildContext,
  MessageTokenCache,
  TRUNCATION_MARKER,
  requestBudget,
  reservedOutputTokens,
  type TokenCounter,
  type TokenEncoding,
  type ContextWindow,
  type ContextWindowSource,
  type ContextBudgetOptions,
  type BuiltContext,
  type SessionTally,
  type RequestBudgetInput,
} from "./context/index.js";
// Long conversations: compressing a session into a continuation session (its middle summarised).
export { compressSession, summaryPromptMessages, SUMMARY_INSTRUCTION_START } from "./context/index.js";
export type { CompressSessionOptions, CompressSessionResult, CompressionStore, SummaryRequest, Summarizer, CompressionSettings } from "./context/index.js";
