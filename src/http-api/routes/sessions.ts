/**
 * Sessions: list (keyset cursor), metadata, messages (paged), rename, delete and the
 * JSON Lines export of one session. A scoped key sees only its tenant's sessions:
 * another tenant's session is "not found" on every route, exactly like a missing one.
 *
 * @module
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { ConflictError, InvalidInputError, type ListSessionsOptions } from "../../store/index.js";
import { principalOf, scopeOf } from "../auth.js";
import { sendJsonLines, sessionNotFound, visibleSession, type ApiContext } from "../api-context.js";
import { errorSchema, idParams, messagePageSchema, sessionPageSchema, sessionRecordSchema, sessionSchema, titleBody, titleSchema } from "../schemas.js";

const notFound = { description: "No such session, or another tenant's (TL_ERR_NOT_FOUND).", schema: errorSchema };
const titleConflict = { description: "Another session holds the title (TL_ERR_CONFLICT).", schema: errorSchema };

/** Query strings after validation. */
interface ListQuery {
  source?: string[];
  model?: string[];
  titled?: boolean;
  since?: number;
  until?: number;
  limit?: number;
  cursor?: string;
  include_children?: boolean;
  order?: "last_active" | "started";
}
interface MessagesQuery {
  limit?: number;
  offset?: number;
  after_id?: number;
  include_rewound?: boolean;
}

/** The listing filters of a query string (shared with `GET /export`). */
export function listFilters(q: { model?: string[]; titled?: boolean; since?: number; until?: number }): ListSessionsOptions {
  return {
    ...(q.model === undefined ? {} : { models: q.model }),
    ...(q.titled === undefined ? {} : { titled: q.titled }),
    ...(q.since === undefined ? {} : { since: q.since }),
    ...(q.until === undefined ? {} : { until: q.until }),
  };
}

/** Sets a title, hiding the holder of a conflicting title from a scoped key (it may be another tenant's session). */
async function setTitle(ctx: ApiContext, request: FastifyRequest, id: string, title: string | null): Promise<string | null> {
  await visibleSession(ctx.db, request, id);
  try {
    return await ctx.db.setTitle(id, title);
  } catch (error) {
    const { userId } = principalOf(request);
    if (error instanceof ConflictError && userId !== null && error.sessionId !== undefined && error.sessionId !== id) {
      const holder = await ctx.db.getSession(error.sessionId);
      if (holder === null || holder.userId !== userId) {
        throw new ConflictError("That title is already in use; choose another title.");
      }
    }
    throw error;
  }
}

/** The sessions resource (`/sessions…`). */
export const sessionRoutes: FastifyPluginAsync<ApiContext> = async (api, ctx) => {
  const { db, registry } = ctx;

  registry.add(api, {
    method: "GET",
    url: "/sessions",
    operationId: "listSessions",
    tag: "sessions",
    summary: "List sessions, newest activity first",
    description:
      "A page of sessions with a keyset cursor. A compression chain is listed once, as its tip, unless include_children is set. A scoped key lists only its tenant's sessions.",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        source: { type: "array", items: { type: "string", minLength: 1 }, description: "Only these sources (repeat the parameter for several)." },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 20, description: "Page size, 1–100 (default 20)." },
        cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page (same filters)." },
        include_children: { type: "boolean", default: false, description: "List every session of a compression chain as its own row." },
        order: {
          type: "string",
          enum: ["last_active", "started"],
          default: "last_active",
          description: "Newest last activity (default) or newest start first.",
        },
        model: { type: "array", items: { type: "string", minLength: 1 }, description: "Only these models (repeatable)." },
        titled: { type: "boolean", description: "true: only titled sessions; false: only untitled ones." },
        since: {
          type: "number",
          description: "Only sessions whose ordering time (last activity, or start with order=started) is at or after this (epoch seconds).",
        },
        until: { type: "number", description: "Only sessions whose ordering time is before this (epoch seconds, exclusive)." },
      },
    },
    responses: { 200: { description: "A page of sessions.", schema: sessionPageSchema } },
    handler: async (request) => {
      const q = request.query as ListQuery;
      return db.listSessions({
        limit: q.limit ?? 20,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        ...(q.source === undefined ? {} : { sources: q.source }),
        includeChildren: q.include_children ?? false,
        orderBy: q.order === "started" ? "started" : "lastActive",
        ...listFilters(q),
        ...scopeOf(request),
      });
    },
  });

  registry.add(api, {
    method: "GET",
    url: "/sessions/:id",
    operationId: "getSession",
    tag: "sessions",
    summary: "A session's metadata",
    description: "Metadata, counters and token usage of one session (exact id).",
    params: idParams,
    responses: { 200: { description: "The session.", schema: sessionSchema }, 404: notFound },
    handler: async (request) => visibleSession(db, request, (request.params as { id: string }).id),
  });

  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/messages",
    operationId: "getSessionMessages",
    tag: "sessions",
    summary: "A session's messages, paged",
    description:
      "Messages in transcript order. Page with after_id (the nextAfterId of the previous page: stable while messages are added) or with offset. Rewound messages are left out unless include_rewound is set.",
    params: idParams,
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        limit: { type: "integer", minimum: 1, maximum: 500, default: 100, description: "Page size, 1–500 (default 100)." },
        offset: { type: "integer", minimum: 0, description: "Messages to skip (not with after_id)." },
        after_id: { type: "integer", minimum: 0, description: "Only messages after this message id." },
        include_rewound: { type: "boolean", default: false, description: "Also return rewound (undone) messages." },
      },
    },
    responses: { 200: { description: "A page of messages.", schema: messagePageSchema }, 404: notFound },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const q = request.query as MessagesQuery;
      if (q.offset !== undefined && q.after_id !== undefined) {
        throw new InvalidInputError("Page with after_id or with offset, not both.", { field: "offset" });
      }
      await visibleSession(db, request, id);
      const limit = q.limit ?? 100;
      const rows = await db.getMessages(id, {
        limit: limit + 1,
        ...(q.offset === undefined ? {} : { offset: q.offset }),
        ...(q.after_id === undefined ? {} : { afterId: q.after_id }),
        includeRewound: q.include_rewound ?? false,
      });
      const items = rows.slice(0, limit);
      return { items, nextAfterId: rows.length > limit ? items[items.length - 1]!.id : null };
    },
  });

  registry.add(api, {
    method: "PATCH",
    url: "/sessions/:id",
    operationId: "updateSession",
    tag: "sessions",
    summary: "Rename a session",
    description: "Changes the session's title (the only field that can be changed here); returns the session.",
    params: idParams,
    body: titleBody,
    responses: { 200: { description: "The updated session.", schema: sessionSchema }, 404: notFound, 409: titleConflict },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      await setTitle(ctx, request, id, (request.body as { title: string | null }).title);
      const session = await db.getSession(id);
      if (session === null) throw sessionNotFound(id);
      return session;
    },
  });

  registry.add(api, {
    method: "PUT",
    url: "/sessions/:id/title",
    operationId: "setSessionTitle",
    tag: "sessions",
    summary: "Set or clear a session's title",
    description: "Sanitises and stores the title (at most 100 code points; null or empty clears it) and returns the stored title.",
    params: idParams,
    body: titleBody,
    responses: { 200: { description: "The stored title.", schema: titleSchema }, 404: notFound, 409: titleConflict },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const title = await setTitle(ctx, request, id, (request.body as { title: string | null }).title);
      return { id, title };
    },
  });

  registry.add(api, {
    method: "DELETE",
    url: "/sessions/:id",
    operationId: "deleteSession",
    tag: "sessions",
    summary: "Delete a session and its messages",
    description: "Its child sessions are kept (detached).",
    params: idParams,
    responses: { 204: { description: "Deleted." }, 404: notFound },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      await visibleSession(db, request, id);
      if (!(await db.deleteSession(id))) throw sessionNotFound(id);
      return reply.code(204).send();
    },
  });

  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/export",
    operationId: "exportSession",
    tag: "export",
    summary: "Export one session as JSON Lines",
    description: "One line: the session record, exactly as SessionDB.exportSessions({ sessionId }) yields it.",
    params: idParams,
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: { include_rewound: { type: "boolean", default: false, description: "Also export rewound messages." } },
    },
    responses: {
      200: { description: "application/x-ndjson: one SessionRecord per line.", schema: sessionRecordSchema, contentType: "application/x-ndjson" },
      404: notFound,
    },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      await visibleSession(db, request, id);
      const includeRewound = (request.query as { include_rewound?: boolean }).include_rewound ?? false;
      return sendJsonLines(reply, db.exportSessions({ sessionId: id, includeRewound, ...scopeOf(request) }), `${id}.jsonl`, ctx.errorLogger);
    },
  });
};
