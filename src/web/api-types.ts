/**
 * The shapes the page reads from the REST API (docs/http.md, docs/api.md "Types"). They
 * mirror the server's records; `web/` imports nothing from the rest of `src/`, so they are
 * declared here, and only with the fields the page uses.
 *
 * @module
 */

/** One row of `GET /sessions`. */
export interface SessionSummary {
  id: string;
  source: string;
  title: string | null;
  preview: string | null;
  model: string | null;
  startedAt: number;
  lastActiveAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  parentSessionId: string | null;
  /** Token and cost totals (as `Session.usage`). */
  usage: SessionUsage;
}

/** Token and cost totals of a session. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  estimatedCostUsd: number;
  actualCostUsd: number | null;
}

/** `GET /sessions/{id}`. */
export interface Session extends SessionSummary {
  userId: string | null;
  systemPrompt: string | null;
  toolCallCount: number;
  usage: SessionUsage;
}

/** One part of a multi-part message. */
export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** The `attachment` of an attachment part (`{ type: "attachment", attachment }`): a stored photo, voice note or file. */
export interface AttachmentRef {
  /** Its id: the SHA-256 of the bytes (`GET /sessions/{id}/attachments/{sha256}`). */
  sha256: string;
  kind: "image" | "audio" | "video" | "file";
  mimeType: string;
  size: number;
  fileName?: string | null;
  caption?: string | null;
  voice?: boolean;
  meta?: Record<string, unknown> | null;
}

/** An OpenAI-style tool call. */
export interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** One row of `GET /sessions/{id}/messages`. */
export interface Message {
  id: number;
  sessionId: string;
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content: string | ContentPart[] | null;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  /** The platform's id of the message; `summary:<session>` and `handoff:<id>` mark a summary and a note no user typed. */
  platformMessageId: string | null;
  timestamp: number;
  rewoundAt: number | null;
}

/** `GET /sessions`. */
export interface SessionPage {
  items: SessionSummary[];
  nextCursor: string | null;
}

/** `GET /sessions/{id}/messages`. */
export interface MessagePage {
  items: Message[];
  nextAfterId: number | null;
}

/** One piece of a search snippet: plain text, highlighted when `match`. */
export interface SnippetSegment {
  text: string;
  match: boolean;
}

/** One hit of `GET /search`. */
export interface SearchHit {
  messageId: number;
  sessionId: string;
  role: Message["role"];
  timestamp: number;
  segments: SnippetSegment[];
}

/** The hits of one session in a page of `GET /search`. */
export interface SearchSessionGroup {
  sessionId: string;
  title: string | null;
  source: string;
  model: string | null;
  sessionStartedAt: number;
  messageIds: number[];
}

/** `GET /search`. */
export interface SearchPage {
  items: SearchHit[];
  sessions: SearchSessionGroup[];
  limit: number;
  offset: number;
}

/** One session of `GET /sessions/{id}/lineage`. */
export interface LineageNode {
  id: string;
  parentSessionId: string | null;
  relation: "root" | "continuation" | "child";
  title: string | null;
  source: string;
  model: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
}

/** `GET /sessions/{id}/lineage`. */
export interface Lineage {
  sessionId: string;
  rootId: string;
  truncated: boolean;
  nodes: LineageNode[];
}

/** A session as named in a delete preview. */
export interface SessionRef {
  id: string;
  title: string | null;
  source: string;
  messageCount: number;
}

/** `GET /sessions/{id}/delete-preview`. */
export interface DeletePreview {
  session: SessionRef;
  removes: { sessions: number; messages: number };
  detaches: SessionRef[];
  detachedOthers: number;
}
