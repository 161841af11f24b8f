/**
 * The shapes the executions, stats and live views read from the REST API (docs/http.md:
 * `GET /execution/history…`, `GET /stats/usage`, `GET /gateway/status` and the events of
 * `GET /gateway/live`). Declared here, with only the fields the page uses, because `web/`
 * imports nothing from the rest of `src/`.
 *
 * @module
 */

/** One run of `GET /execution/history` (`ExecutionMetadata`). */
export interface ExecutionSummary {
  id: string;
  kind: "agent" | "workflow";
  name: string;
  baseId: string;
  parentId: string | null;
  userId: string | null;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  /** Step session id → agent name (workflows). */
  agentsInvolved: Record<string, string> | null;
}

/** `GET /execution/history/{id}`: a run with its stored result (any JSON). */
export interface ExecutionRun extends ExecutionSummary {
  result: unknown;
}

/** `GET /execution/history`. */
export interface ExecutionPage {
  items: ExecutionSummary[];
  total: number;
  limit: number;
  offset: number;
}

/** Usage totals of a model or a source in `GET /stats/usage`. */
export interface UsageTotals {
  sessions: number;
  messages: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  estimatedCostUsd: number;
  actualCostUsd: number;
}

/** `GET /stats/usage`. */
export interface UsageStats {
  since: number;
  until: number | null;
  timeZone: string;
  totals: UsageTotals;
  byDay: Array<{ day: string; source: string; sessions: number; messages: number }>;
  byModel: Array<UsageTotals & { model: string | null }>;
  bySource: Array<UsageTotals & { source: string }>;
  /** Bytes on disk; `null` for a scoped key. */
  databaseBytes: number | null;
  searchIndexBytes: number | null;
}

/** `GET /gateway/status` and each `snapshot` event of `GET /gateway/live`. */
export interface GatewaySnapshot {
  at: number;
  accepting: boolean;
  activeTurns: number;
  /** Sessions with a live agent in the gateway (active sessions). */
  liveAgents: number;
  turnsCompleted: number;
  runningSessions: Array<{ key: string; sessionId: string | null; platform: string; phase: "turn" | "between" }>;
  queueDepths: Array<{ key: string; depth: number }>;
  queuedTotal: number;
  adapters: Array<{ platform: string; connected: boolean }>;
}

/** A pending pairing code of `GET /pairing` (times in epoch seconds). */
export interface PairingRequest {
  platform: string;
  code: string;
  userId: string;
  userName: string | null;
  chatId: string | null;
  createdAt: number;
  expiresAt: number;
}

/** An approved person of `GET /pairing`. */
export interface PairingApproval {
  platform: string;
  userId: string;
  userName: string | null;
  approvedAt: number;
  approvedBy: string | null;
}

/** `GET /pairing`. */
export interface PairingList {
  pending: PairingRequest[];
  approved: PairingApproval[];
}

/** Which memory: the agent's notes (`memory`) or what it knows about the person (`user`). */
export type MemoryKind = "memory" | "user";

/** Whose memory (`{ platform: "owner", userId: "owner" }`: the gateway owner). */
export interface MemoryOwner {
  platform: string;
  userId: string;
}

/** A memory record of `GET /memory` and `GET /memory/{platform}/{userId}` (times in epoch seconds). */
export interface MemoryRecord {
  owner: MemoryOwner;
  kind: MemoryKind;
  /** Untrusted text (the model wrote it): rendered as text only. */
  entries: string[];
  chars: number;
  limit: number;
  updatedAt: number;
  version: number;
}

/** `GET /memory`. */
export interface MemoryPage {
  items: MemoryRecord[];
  nextCursor: string | null;
}

/** `GET /memory/{platform}/{userId}`. */
export interface MemoryPerson {
  owner: MemoryOwner;
  memory: MemoryRecord | null;
  user: MemoryRecord | null;
}
