/**
 * Database totals (`GET /stats`): sessions and messages, per source and per model, bytes
 * on disk. They describe the whole database, so only admin keys may read them.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import { principalOf, requireAdmin, scopeOf } from "../auth.js";
import { InvalidInputError } from "../../store/index.js";
import type { ApiContext } from "../api-context.js";
import { errorSchema, statsSchema, usageStatsSchema } from "../schemas.js";

/** How long `GET /stats/usage` reuses the database size it read. */
export const SIZE_TTL_MS = 60_000;

/** The stats resource (`/stats`). */
export const statsRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/stats",
    operationId: "getStats",
    tag: "sessions",
    summary: "Database totals (admin keys only)",
    description: "Totals of the whole database: a key scoped to a user gets 403.",
    responses: {
      200: { description: "The totals.", schema: statsSchema },
      403: { description: "A wrong key, or a key scoped to a user (TL_ERR_FORBIDDEN).", schema: errorSchema },
    },
    handler: async (request) => {
      requireAdmin(request);
      return db.getStats();
    },
  });

  // The size comes with whole-database totals (a pass over the session rows): read at most once per SIZE_TTL_MS.
  let sizeCache: { at: number; value: Promise<number> } | null = null;
  const databaseBytes = (): Promise<number> => {
    const now = Date.now();
    if (sizeCache === null || now - sizeCache.at > SIZE_TTL_MS) {
      const value = db.getStats({ searchIndexBytes: false }).then((s) => s.databaseBytes);
      sizeCache = { at: now, value };
      value.catch(() => {
        if (sizeCache?.value === value) sizeCache = null;
      });
    }
    return sizeCache.value;
  };

  registry.add(api, {
    method: "GET",
    url: "/stats/usage",
    operationId: "getUsageStats",
    tag: "sessions",
    summary: "Sessions and messages per day and source, tokens and cost per model",
    description:
      "Over the sessions started in [since, until) (default: the last `days` days, 30): totals, per local day and source " +
      "(messages counted on the day their session started), per model and per source. Computed from per-session counters: " +
      "no message is read. databaseBytes (admin keys) is at most a minute old. A scoped key gets its own sessions' figures and databaseBytes null.",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        days: { type: "integer", minimum: 1, maximum: 3660, description: "The period: the last N days (default 30; not with since)." },
        since: { type: "number", description: "Sessions started at or after this (epoch seconds)." },
        until: { type: "number", description: "Sessions started before this (epoch seconds, exclusive)." },
        source: { type: "array", items: { type: "string", minLength: 1 }, description: "Only these sources (repeatable)." },
      },
    },
    responses: { 200: { description: "The figures.", schema: usageStatsSchema } },
    handler: async (request) => {
      const q = request.query as { days?: number; since?: number; until?: number; source?: string[] };
      if (q.days !== undefined && q.since !== undefined) {
        throw new InvalidInputError("Give the period as days or as since, not both.", { field: "days" });
      }
      const since = q.since ?? Date.now() / 1000 - (q.days ?? 30) * 86_400;
      const insights = await db.getInsights({
        since,
        ...(q.until === undefined ? {} : { until: q.until }),
        ...(q.source === undefined ? {} : { sources: q.source }),
        top: 1,
        ...scopeOf(request),
      });
      const admin = principalOf(request).userId === null;
      const size = admin ? await databaseBytes() : null;
      return {
        since: insights.since,
        until: insights.until,
        timeZone: insights.activity.timeZone,
        totals: insights.totals,
        byDay: insights.byDay,
        byModel: insights.byModel,
        bySource: insights.bySource,
        databaseBytes: size,
      };
    },
  });
};
