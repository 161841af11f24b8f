/**
 * What every resource plugin of the API is given, and the helpers they share: the
 * tenant-checked session lookup and the streamed JSON Lines reply.
 *
 * @module
 */
import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Executions } from "../executions/index.js";
import {
  NotFoundError,
  type MediaStore,
  type MemoryStore,
  type PairingStore,
  type Session,
  type SessionHistory,
  type SessionSearch,
  type StoreMaintenance,
} from "../store/index.js";
import { principalOf } from "./auth.js";
import type { ErrorLogger } from "./error-handler.js";
import type { GatewayLiveSource } from "./gateway-live.js";
import type { RouteRegistry } from "./openapi.js";

/**
 * The roles of the store the API's routes call: sessions and transcripts, search, export
 * and totals, pairing, memory and media (attachments). Execution sessions go through {@link Executions} (an `ExecutionStore`).
 */
export type ApiStore = SessionHistory & SessionSearch & StoreMaintenance & PairingStore & MemoryStore & MediaStore;

/** The options of each resource plugin (`routes/<resource>.ts`). */
export interface ApiContext {
  db: ApiStore;
  executions: Executions;
  registry: RouteRegistry;
  /** Where unexpected errors go (`null`: the request's logger). */
  errorLogger: ErrorLogger | null;
  /** The running gateway (`threadline serve`), or `null`. */
  gatewayLive: GatewayLiveSource | null;
  /** How often a live stream looks for changes, in ms. */
  liveIntervalMs: number;
}

/** The reply of an unknown session, and of another tenant's session alike (no existence leak). */
export function sessionNotFound(id: string): NotFoundError {
  return new NotFoundError(`Session '${id}' not found`);
}

/** The session `id` if the caller may see it; otherwise {@link sessionNotFound} (never a 403). */
export async function visibleSession(db: SessionHistory, request: FastifyRequest, id: string): Promise<Session> {
  const session = await db.getSession(id);
  const { userId } = principalOf(request);
  if (session === null || (userId !== null && session.userId !== userId)) throw sessionNotFound(id);
  return session;
}

/** JSON Lines media type of exports. */
export const NDJSON = "application/x-ndjson; charset=utf-8";

/**
 * Streams records as JSON Lines with back-pressure (one record in memory at a time). The
 * first record is read before the status is sent, so an error there (an unknown session)
 * is still a normal error reply; a failure later is logged and cuts the stream (the client
 * sees an incomplete chunked response, never a silently short export).
 */
export async function sendJsonLines(reply: FastifyReply, records: AsyncIterable<unknown>, filename: string, logger: ErrorLogger | null): Promise<FastifyReply> {
  const iterator = records[Symbol.asyncIterator]();
  const first = await iterator.next();
  const request = reply.request;
  async function* lines(): AsyncGenerator<string> {
    try {
      for (let next = first; next.done !== true; next = await iterator.next()) yield `${JSON.stringify(next.value)}\n`;
    } catch (error) {
      (logger ?? request.log).error(
        { err: error, requestId: request.id, method: request.method, url: request.url },
        "export failed mid-stream; the response was cut",
      );
      throw error;
    } finally {
      await iterator.return?.();
    }
  }
  return reply
    .code(200)
    .header("content-type", NDJSON)
    .header("content-disposition", `attachment; filename="${filename.replace(/[^\w.-]/gu, "_")}"`)
    .header("cache-control", "no-store")
    .send(Readable.from(lines(), { objectMode: false }));
}
