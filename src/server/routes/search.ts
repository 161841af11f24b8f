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
      'Full-text search (words, "phrases", prefix*, AND/OR/NOT). Each hit has a snippet with matches wrapped in >>> and <<<, and the messages around it.',
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
      return { items, limit, offset };
    },
  });
};
