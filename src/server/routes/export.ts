/**
 * The streamed export of many sessions (`GET /export`), as JSON Lines in constant memory:
 * one `SessionRecord` per line, exactly as `SessionDB.exportSessions` yields them. A scoped
 * key exports only its tenant's sessions.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import { scopeOf } from "../auth.js";
import { sendJsonLines, type ApiContext } from "../api-context.js";
import { sessionRecordSchema } from "../schemas.js";

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
      },
    },
    responses: {
      200: { description: "application/x-ndjson: one SessionRecord per line (no lines when nothing matches).", schema: sessionRecordSchema, contentType: "application/x-ndjson" },
    },
    handler: async (request, reply) => {
      const q = request.query as { source?: string[]; include_rewound?: boolean };
      const records = db.exportSessions({
        ...(q.source === undefined ? {} : { sources: q.source }),
        includeRewound: q.include_rewound ?? false,
        ...scopeOf(request),
      });
      return sendJsonLines(reply, records, "threadline-export.jsonl", errorLogger);
    },
  });
};
