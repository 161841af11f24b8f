/**
 * Memory (`/memory`): what the agent keeps about each person across resets and compressions
 * (hermes-agent's `MEMORY.md` and `USER.md`, kept per person in the database). List the
 * records (`GET /memory`), read one person's two memories (`GET /memory/{platform}/{userId}`),
 * replace the entries of one (`PUT …/{kind}`, optimistic: `expectedVersion`) and clear one or
 * both (`DELETE …[/{kind}]`). Times are epoch seconds, as everywhere in this API (the store
 * keeps milliseconds).
 *
 * Scoped like sessions: a key with a `userId` (a tenant) reaches only the records whose owner
 * has that user id, on any platform except `"owner"`; the gateway owner's memory
 * (`{ platform: "owner", userId: "owner" }`) and everyone else's are for admin keys only.
 * Another person's memory answers exactly like one that does not exist (404, same message),
 * so a tenant cannot learn whether it exists.
 *
 * @module
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { MEMORY_CHAR_LIMIT, NotFoundError, USER_CHAR_LIMIT, type MemoryKind, type MemoryOwner, type MemoryRecord } from "../../store/index.js";
import { principalOf } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import { HttpError } from "../error-handler.js";
import { errorSchema, memoryKindParams, memoryOwnerParams, memoryPageSchema, memoryPersonSchema, memoryRecordSchema, memoryWriteBody } from "../schemas.js";

/** The platform of the gateway owner's memory (`gateway.owner`): admin keys only. */
const OWNER_PLATFORM = "owner";

const notFound = { description: "No memory of that person (of that kind), or another person's (TL_ERR_NOT_FOUND).", schema: errorSchema };

/** A record as this API shows it: `updatedAt` in epoch seconds, and the kind's limit. */
interface MemoryRecordOut extends MemoryRecord {
  /** The kind's limit in characters. */
  limit: number;
}

const limitOf = (kind: MemoryKind): number => (kind === "memory" ? MEMORY_CHAR_LIMIT : USER_CHAR_LIMIT);
const recordOut = (r: MemoryRecord): MemoryRecordOut => ({
  owner: { platform: r.owner.platform, userId: r.owner.userId },
  kind: r.kind,
  entries: r.entries,
  chars: r.chars,
  limit: limitOf(r.kind),
  updatedAt: r.updatedAt / 1000,
  version: r.version,
});

/**
 * Whether the caller may reach `owner`'s memory. An admin key reaches everyone's. A tenant
 * key (`userId`) reaches the records whose owner `userId` is its own, on any platform but
 * `"owner"` (a tenant named `owner` is not the gateway owner). Sessions are scoped the same
 * way: by `Session.userId`, whatever the source.
 */
export function mayReachMemory(tenant: string | null, owner: MemoryOwner): boolean {
  return tenant === null || (owner.userId === tenant && owner.platform !== OWNER_PLATFORM);
}

/** The reply of a person without memory, and of another person's memory alike (no existence leak). */
function memoryNotFound(owner: MemoryOwner, kind?: MemoryKind): NotFoundError {
  const what = kind === undefined ? "Memory" : `The ${kind} memory`;
  return new NotFoundError(`${what} of user '${owner.userId}' on '${owner.platform}' not found`);
}

/** The owner named by a request's path, or {@link memoryNotFound} when the caller may not reach it. */
function reachableOwner(request: FastifyRequest, kind?: MemoryKind): MemoryOwner {
  const { platform, userId } = request.params as { platform: string; userId: string };
  const owner = { platform, userId };
  if (!mayReachMemory(principalOf(request).userId, owner)) throw memoryNotFound(owner, kind);
  return owner;
}

/** Query string of `GET /memory` after validation. */
interface ListQuery {
  platform?: string;
  user_id?: string;
  limit?: number;
  cursor?: string;
}

/** The memory resource (`/memory…`). */
export const memoryRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/memory",
    operationId: "listMemory",
    tag: "memory",
    summary: "List memory records, newest first",
    description:
      "A page of memory records (each person has up to two: memory and user), most recently written first, with a keyset cursor. " +
      "A key scoped to a user lists only records whose owner has that user id (never the gateway owner's).",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        platform: { type: "string", minLength: 1, maxLength: 256, description: 'Only this platform ("owner": the gateway owner\'s).' },
        user_id: { type: "string", minLength: 1, maxLength: 256, description: "Only this user id." },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 50, description: "Page size, 1–100 (default 50)." },
        cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page (same filters)." },
      },
    },
    responses: { 200: { description: "A page of memory records.", schema: memoryPageSchema } },
    handler: async (request) => {
      const q = request.query as ListQuery;
      const tenant = principalOf(request).userId;
      if (tenant !== null && ((q.user_id !== undefined && q.user_id !== tenant) || q.platform === OWNER_PLATFORM)) {
        return { items: [], nextCursor: null };
      }
      const page = await db.listMemories({
        limit: q.limit ?? 50,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        ...(q.platform === undefined ? {} : { platform: q.platform }),
        ...(tenant !== null ? { userId: tenant } : q.user_id === undefined ? {} : { userId: q.user_id }),
      });
      // The store filters by user id only: a tenant whose id is "owner" must still not see the gateway owner's records.
      const items = page.items.filter((r) => mayReachMemory(tenant, r.owner)).map(recordOut);
      return { items, nextCursor: page.nextCursor };
    },
  });

  registry.add(api, {
    method: "GET",
    url: "/memory/:platform/:userId",
    operationId: "getMemory",
    tag: "memory",
    summary: "One person's memories (both kinds)",
    description: "The agent's notes (memory) and what it knows about the person (user); a kind that was never written is null. 404 when neither is stored.",
    params: memoryOwnerParams,
    responses: { 200: { description: "Both memories of the person.", schema: memoryPersonSchema }, 404: notFound },
    handler: async (request) => {
      const owner = reachableOwner(request);
      const [memory, user] = await Promise.all([db.getMemory(owner, "memory"), db.getMemory(owner, "user")]);
      if (memory === null && user === null) throw memoryNotFound(owner);
      return { owner, memory: memory === null ? null : recordOut(memory), user: user === null ? null : recordOut(user) };
    },
  });

  registry.add(api, {
    method: "PUT",
    url: "/memory/:platform/:userId/:kind",
    operationId: "writeMemory",
    tag: "memory",
    summary: "Replace the entries of one memory",
    description:
      "Body { entries, expectedVersion }: the version you read (null to create a memory that does not exist yet). " +
      "Another write since then is a 409 (details.version: the version now, or null when it was cleared): reload and apply the change again. " +
      'Entries joined by "\\n§\\n" may take at most 2200 characters for memory and 1375 for user (422 naming the limit); ' +
      "an entry may not be empty nor hold a line that is only §.",
    params: memoryKindParams,
    body: memoryWriteBody,
    responses: {
      200: { description: "The stored memory.", schema: memoryRecordSchema },
      404: { description: "Another person's memory (TL_ERR_NOT_FOUND), exactly like a missing one.", schema: errorSchema },
      409: { description: "The memory changed since expectedVersion (TL_ERR_CONFLICT; details.version).", schema: errorSchema },
    },
    handler: async (request) => {
      const { kind } = request.params as { kind: MemoryKind };
      const owner = reachableOwner(request, kind);
      const { entries, expectedVersion } = request.body as { entries: string[]; expectedVersion: number | null };
      const written = await db.writeMemory({ owner, kind, entries, expectedVersion });
      if (written !== null) return recordOut(written);
      const current = await db.getMemory(owner, kind);
      const now = current === null ? "it does not exist now" : `it is at version ${current.version} now`;
      const read = expectedVersion === null ? "you expected none" : `you read version ${expectedVersion}`;
      throw new HttpError("TL_ERR_CONFLICT", `This memory changed elsewhere (${read}; ${now}). Reload it and apply your change again.`, {
        details: { version: current?.version ?? null },
      });
    },
  });

  const clear = async (request: FastifyRequest, kind: MemoryKind | undefined): Promise<void> => {
    const owner = reachableOwner(request, kind);
    if ((await db.clearMemory(owner, kind)) === 0) throw memoryNotFound(owner, kind);
  };

  registry.add(api, {
    method: "DELETE",
    url: "/memory/:platform/:userId",
    operationId: "clearMemory",
    tag: "memory",
    summary: "Clear both of a person's memories",
    description: "Removes the agent's notes and what it knows about the person. 404 when neither is stored.",
    params: memoryOwnerParams,
    responses: { 204: { description: "Cleared." }, 404: notFound },
    handler: async (request, reply) => {
      await clear(request, undefined);
      return reply.code(204).send();
    },
  });

  registry.add(api, {
    method: "DELETE",
    url: "/memory/:platform/:userId/:kind",
    operationId: "clearMemoryKind",
    tag: "memory",
    summary: "Clear one of a person's memories",
    description: "Removes that kind only; the other stays. 404 when it is not stored.",
    params: memoryKindParams,
    responses: { 204: { description: "Cleared." }, 404: notFound },
    handler: async (request, reply) => {
      await clear(request, (request.params as { kind: MemoryKind }).kind);
      return reply.code(204).send();
    },
  });
};
