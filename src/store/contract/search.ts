/**
 * The {@link SessionSearch} role (full-text search over messages) and its records. Part of the
 * storage contract (see `./index.ts`).
 *
 * @module
 */
import type { MessageRole, SourceIdentity } from "./history.js";

/** Options of {@link SessionSearch.searchMessages}. */
export interface SearchOptions {
  sources?: string[];
  excludeSources?: string[];
  /** Only messages with these roles. */
  roles?: MessageRole[];
  /** Default 20, 1 to 1,000. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  /** `"relevance"` (default), `"newest"` or `"oldest"`. */
  sort?: "relevance" | "newest" | "oldest";
  /** Only messages of sessions of this user (`Session.userId`). */
  userId?: string;
  /** Only messages of sessions whose `userId` is one of these; an empty list matches nothing. */
  userIds?: string[];
  /** Only messages of sessions whose `source` and `userId` are one of these pairs; an empty list matches nothing. */
  identities?: SourceIdentity[];
  /** Only messages of sessions of this chat (`Session.chatId`). */
  chatId?: string;
}

/** A neighbouring message shown around a search hit. */
export interface ContextMessage {
  id: number;
  role: MessageRole;
  /** Text content cut to 200 characters. */
  content: string;
  timestamp: number;
}

/** One search result. */
export interface SearchHit {
  messageId: number;
  sessionId: string;
  role: MessageRole;
  /** An excerpt with every match wrapped in `>>>` and `<<<`. */
  snippet: string;
  timestamp: number;
  toolName: string | null;
  source: string;
  model: string | null;
  sessionStartedAt: number;
  /** The visible messages just before and after the hit in its session. */
  context: { before: ContextMessage | null; after: ContextMessage | null };
}

/** Full-text search over the visible messages of every session. */
export interface SessionSearch {
  /** Full-text search; never throws on user input. See docs "Search syntax". */
  searchMessages(query: string, options?: SearchOptions): Promise<SearchHit[]>;
}
