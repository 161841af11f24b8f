/**
 * Database totals (`GET /stats`): sessions and messages, per source and per model, bytes
 * on disk. They describe the whole database, so only admin keys may read them.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import { requireAdmin } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import { errorSchema, statsSchema } from "../schemas.js";

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
};
