/**
 * The streamed export of many sessions (`GET /export`), as JSON Lines in constant memory:
 * one `SessionRecord` per line, exactly as `SessionDB.exportSessions` yields them. A scoped
 * key exports only its tenant's sessions.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import type { ListSessionsOptions, SessionRecord } from "../../store/index.js";
import { scopeOf } from "../auth.js";
import { listFilters } from "./sessions.js";
import { sendJsonLines, type ApiContext } from "../api-context.js";
import { sessionRecordSchema } from "../schemas.js";

interface ExportQuery {
  source?: string[];
  include_rewound?: boolean;
  model?: string[];
  titled?: boolean;
  since?: number;
  until?: number;
  order?: "last_active" | "started";
}

/** The export resource (`/export`). */
export const exportRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry, errorLogger }) => {
  registry.add(api, {
    method: "GET",
    url: "/export",
    operationId: "exportSessions",
    tag: "export",
    summary: "Export sessions as JSON Lines",
    description:
      "Streams every visible session (oldest start first) with its messages, one JSON record per line (application/x-ndjson). " +
      "`threadline sessions import` and SessionDB.importSessions read it back.",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        source: { type: "array", items: { type: "string", minLength: 1 }, description: "Only these sources (repeatable)." },
        include_rewound: { type: "boolean", default: false, description: "Also export rewound messages." },
        model: { type: "array", items: { type: "string", minLength: 1 }, description: "Only these models (repeatable); like GET /sessions." },
        titled: { type: "boolean", description: "true: only titled sessions; false: only untitled ones." },
        since: { type: "number", description: "Only sessions whose last activity (started with order=started) is at or after this (epoch seconds)." },
        until: { type: "number", description: "Only sessions whose last activity (start with order=started) is before this (epoch seconds, exclusive)." },
        order: {
          type: "string",
          enum: ["last_active", "started"],
          description: "Which time since/until bound (default last_active); with any listing filter, sessions come newest first.",
        },
      },
    },
    responses: {
      200: {
        description: "application/x-ndjson: one SessionRecord per line (no lines when nothing matches).",
        schema: sessionRecordSchema,
        contentType: "application/x-ndjson",
      },
    },
    handler: async (request, reply) => {
      const q = request.query as ExportQuery;
      const includeRewound = q.include_rewound ?? false;
      const filters = listFilters(q);
      if (Object.keys(filters).length === 0 && q.order === undefined) {
        const records = db.exportSessions({ ...(q.source === undefined ? {} : { sources: q.source }), includeRewound, ...scopeOf(request) });
        return sendJsonLines(reply, records, "threadline-export.jsonl", errorLogger);
      }
      // Listing filters: walk the (index-backed) listing page by page and export each session.
      const listing: ListSessionsOptions = {
        ...filters,
        ...(q.source === undefined ? {} : { sources: q.source }),
        orderBy: q.order === "started" ? "started" : "lastActive",
        includeChildren: true,
        limit: 200,
        ...scopeOf(request),
      };
      await db.listSessions({ ...listing, limit: 1 }); // invalid filters fail here, before the status is sent
      async function* records(): AsyncGenerator<SessionRecord> {
        let cursor: string | null = null;
        do {
          const page = await db.listSessions({ ...listing, cursor });
          for (const summary of page.items) {
            for await (const record of db.exportSessions({ sessionId: summary.id, includeRewound, ...scopeOf(request) })) yield record;
          }
          cursor = page.nextCursor;
        } while (cursor !== null);
      }
      return sendJsonLines(reply, records(), "threadline-export.jsonl", errorLogger);
    },
  });
};
