/**
 * Full-text search over messages (`GET /search`). A scoped key finds only its tenant's
 * messages. The query syntax is the store's (docs/api.md "Search syntax"): any string is a
 * valid query; one that sanitises to nothing finds nothing.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import type { MessageRole } from "../../store/index.js";
import { scopeOf } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import { searchResultSchema } from "../schemas.js";

/** A piece of a snippet: plain text, or a match (`match: true`). */
export interface SnippetSegment {
  text: string;
  match: boolean;
}

/**
 * A snippet split at its `>>>`/`<<<` match markers, so a page can highlight matches without
 * building HTML. Adjacent pieces of one kind are merged; empty pieces are left out.
 */
export function snippetSegments(snippet: string): SnippetSegment[] {
  const out: SnippetSegment[] = [];
  const push = (text: string, match: boolean): void => {
    if (text === "") return;
    const last = out[out.length - 1];
    if (last !== undefined && last.match === match) last.text += text;
    else out.push({ text, match });
  };
  let pos = 0;
  for (;;) {
    const open = snippet.indexOf(">>>", pos);
    const close = open < 0 ? -1 : snippet.indexOf("<<<", open + 3);
    if (open < 0 || close < 0) break;
    push(snippet.slice(pos, open), false);
    push(snippet.slice(open + 3, close), true);
    pos = close + 3;
  }
  push(snippet.slice(pos), false);
  return out;
}

interface SearchQuery {
  query: string;
  source?: string[];
  role?: MessageRole[];
  limit?: number;
  offset?: number;
  sort?: "relevance" | "newest" | "oldest";
}

/** The search resource (`/search`). */
export const searchRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/search",
    operationId: "searchMessages",
    tag: "sessions",
    summary: "Search messages",
    description:
      'Full-text search (words, "phrases", prefix*, AND/OR/NOT). Each hit has a snippet with matches wrapped in >>> and <<<, the same snippet as segments ' +
      "({ text, match }: highlight without HTML), and the messages around it; `sessions` groups the page's hits by session.",
    querystring: {
      type: "object",
      required: ["query"],
      additionalProperties: false,
      properties: {
        query: { type: "string", maxLength: 10_000, description: "The search text." },
        source: { type: "array", items: { type: "string", minLength: 1 }, description: "Only sessions of these sources (repeatable)." },
        role: {
          type: "array",
          items: { type: "string", enum: ["system", "developer", "user", "assistant", "tool"] },
          description: "Only messages with these roles (repeatable).",
        },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 20, description: "At most this many hits, 1–100 (default 20)." },
        offset: { type: "integer", minimum: 0, default: 0, description: "Hits to skip." },
        sort: { type: "string", enum: ["relevance", "newest", "oldest"], default: "relevance" },
      },
    },
    responses: { 200: { description: "The hits.", schema: searchResultSchema } },
    handler: async (request) => {
      const q = request.query as SearchQuery;
      const limit = q.limit ?? 20;
      const offset = q.offset ?? 0;
      const items = await db.searchMessages(q.query, {
        limit,
        offset,
        sort: q.sort ?? "relevance",
        ...(q.source === undefined ? {} : { sources: q.source }),
        ...(q.role === undefined ? {} : { roles: q.role }),
        ...scopeOf(request),
      });
      const sessions = new Map<
        string,
        { sessionId: string; title: string | null; source: string; model: string | null; sessionStartedAt: number; messageIds: number[] }
      >();
      for (const hit of items) {
        const group = sessions.get(hit.sessionId);
        if (group !== undefined) group.messageIds.push(hit.messageId);
        else
          sessions.set(hit.sessionId, {
            sessionId: hit.sessionId,
            title: null,
            source: hit.source,
            model: hit.model,
            sessionStartedAt: hit.sessionStartedAt,
            messageIds: [hit.messageId],
          });
      }
      for (const group of sessions.values()) group.title = (await db.getSession(group.sessionId))?.title ?? null;
      return { items: items.map((hit) => ({ ...hit, segments: snippetSegments(hit.snippet) })), sessions: [...sessions.values()], limit, offset };
    },
  });
};
