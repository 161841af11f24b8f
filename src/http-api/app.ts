/**
 * The HTTP API of a Threadline database: {@link apiRoutes}, a Fastify plugin that a
 * running server registers (`threadline serve` does, on the gateway's port), and
 * {@link buildServer}, a Fastify instance with nothing but the API (`threadline api`; tests).
 * Neither listens: the caller does.
 *
 * The plugin is encapsulated: its auth hook, error handler and request checks apply to its
 * own routes only, never to the host server's other routes.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { Executions } from "../executions/index.js";
import {
  InvalidInputError,
  type ExecutionStore,
  type MediaStore,
  type MemoryStore,
  type PairingStore,
  type SessionHistory,
  type SessionSearch,
  type StoreMaintenance,
} from "../store/index.js";
import { ApiKeyring, checkApiAccess, setPrincipal, type ApiKey } from "./auth.js";
import type { ApiContext } from "./api-context.js";
import type { GatewayLiveSource } from "./gateway-live.js";
import { makeErrorHandler, notFoundHandler, type ErrorLogger } from "./error-handler.js";
import { RouteRegistry, type ApiRouteConfig } from "./openapi.js";
import { lazySchemaCompilers } from "./lazy-schema-compilers.js";
import { guardRequests, hostNamesFor } from "./request-guard.js";
import { attachmentRoutes } from "./routes/attachments.js";
import { executionRoutes } from "./routes/executions.js";
import { gatewayRoutes } from "./routes/gateway.js";
import { memoryRoutes } from "./routes/memory.js";
import { exportRoutes } from "./routes/export.js";
import { openApiRoutes } from "./routes/openapi.js";
import { pairingRoutes } from "./routes/pairing.js";
import { searchRoutes } from "./routes/search.js";
import { sessionLineageRoutes } from "./routes/session-lineage.js";
import { sessionRoutes } from "./routes/sessions.js";
import { statsRoutes } from "./routes/stats.js";
import { trackUnusedConnections } from "../net/index.js";

/** Options of {@link apiRoutes} (and of {@link buildServer}). */
export interface ApiOptions {
  /** The database the API serves: any `SessionDB` (the API calls these roles of it). */
  db: SessionHistory & SessionSearch & StoreMaintenance & ExecutionStore & PairingStore & MemoryStore & MediaStore;
  /** Execution sessions on `db` (default: `new Executions(db)`). */
  executions?: Executions;
  /** Accepted API keys; a key with `userId` sees only that user's sessions and runs. */
  keys?: readonly ApiKey[];
  /** With no keys: serve loopback clients without a key (as admin). Refused unless `listenHost` is a loopback address. Default false. */
  allowUnauthenticatedLoopback?: boolean;
  /** The host the server listens on (checked when no keys are configured). */
  listenHost?: string;
  /** Reverse proxies (addresses or CIDR ranges) whose forwarding headers are believed for the keyless loopback check (`gateway.trustProxy`). */
  trustProxy?: readonly string[];
  /** Set when keyless access must not be given at all: every keyless request answers 401 with this message. */
  keylessRefusal?: string | null;
  /** Where unexpected (500) errors are logged (default: the request's logger). */
  errorLogger?: ErrorLogger;
  /** The running gateway, for `/gateway/status` and `/gateway/live` (`threadline serve` passes it; without it they answer 404). */
  gatewayLive?: GatewayLiveSource | null;
  /** How often `/gateway/live` looks for changes, in ms (default 1000). */
  liveIntervalMs?: number;
}

function routeConfig(request: FastifyRequest): ApiRouteConfig["threadlineApi"] | undefined {
  return (request.routeOptions.config as Partial<ApiRouteConfig> | undefined)?.threadlineApi;
}

/** Rejects query parameters and body fields the route does not know (a typo must not silently widen a request). */
function rejectUnknown(names: string[] | null, given: unknown, where: "query" | "body"): void {
  if (names === null || given === null || typeof given !== "object" || Array.isArray(given)) return;
  for (const key of Object.keys(given)) {
    if (!names.includes(key)) {
      const allowed = names.length === 0 ? "none" : names.join(", ");
      throw new InvalidInputError(`Unknown ${where === "query" ? "query parameter" : "body field"} '${key}'; allowed: ${allowed}.`, { field: key });
    }
  }
}

/**
 * The API as a Fastify plugin: sessions and their attachments, search, export, stats, execution history, pairing, memory and
 * `/openapi.json`, behind API keys. Register it on any Fastify server, with an optional
 * `prefix`. Throws {@link InvalidInputError} when the access settings are unsafe (no keys
 * without `allowUnauthenticatedLoopback` on a loopback host, a short or repeated key).
 *
 * @example
 * import Fastify from "fastify";
 * import { openSessionDB } from "threadline";
 * import { apiRoutes } from "threadline/server";
 * const app = Fastify();
 * await app.register(apiRoutes, { db: await openSessionDB(), keys: [{ key: "a-long-random-admin-key" }] });
 * await app.listen({ port: 8788 });
 */
export const apiRoutes: FastifyPluginAsync<ApiOptions> = async (api, options) => {
  const access = {
    keys: options.keys ?? [],
    allowUnauthenticatedLoopback: options.allowUnauthenticatedLoopback ?? false,
    trustProxy: options.trustProxy ?? [],
    keylessRefusal: options.keylessRefusal ?? null,
  };
  checkApiAccess(access, options.listenHost);
  const keyring = new ApiKeyring(access);
  const ctx: ApiContext = {
    db: options.db,
    executions: options.executions ?? new Executions(options.db),
    registry: new RouteRegistry(),
    errorLogger: options.errorLogger ?? null,
    gatewayLive: options.gatewayLive ?? null,
    liveIntervalMs: options.liveIntervalMs ?? 1000,
  };

  api.setErrorHandler(makeErrorHandler(options.errorLogger ?? null));
  if (api.prefix !== "") api.setNotFoundHandler(notFoundHandler);
  api.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (routeConfig(request)?.public === true) return;
    setPrincipal(request, keyring.authenticate(request));
  });
  api.addHook("preValidation", async (request) => {
    const config = routeConfig(request);
    if (config === undefined) return;
    rejectUnknown(config.queryNames, request.query, "query");
    if (config.bodyOptional && (request.body === undefined || request.body === null)) request.body = {};
    rejectUnknown(config.bodyNames, request.body, "body");
  });

  for (const plugin of [
    sessionRoutes,
    sessionLineageRoutes,
    attachmentRoutes,
    searchRoutes,
    exportRoutes,
    statsRoutes,
    executionRoutes,
    gatewayRoutes,
    pairingRoutes,
    memoryRoutes,
    openApiRoutes,
  ]) {
    await api.register(plugin, ctx);
  }
};

/** Options of {@link buildServer}. */
export interface BuildServerOptions extends ApiOptions {
  /** Logs requests and unexpected errors (default: none). */
  logger?: Logger;
  /** Path prefix of every route (default none: `/sessions`, `/execution/history`…). */
  prefix?: string;
  /** Largest request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /**
   * Host names the server answers to besides localhost and loopback addresses (and
   * `listenHost` when it is a specific address): any other `Host` gets 403, and so does a
   * cross-site browser POST/PUT/PATCH/DELETE (default: none).
   */
  publicHosts?: readonly string[];
}

/**
 * A Fastify server with only the API (`threadline api`, tests). It does not listen: call
 * `listen()`. Unknown routes answer 404 in the API's error shape; `close()` finishes
 * running requests and closes idle keep-alive connections and those that never sent a request.
 *
 * @example
 * import { openSessionDB } from "threadline";
 * import { buildServer } from "threadline/server";
 * const app = await buildServer({ db: await openSessionDB(), keys: [{ key: process.env.API_KEY! }] });
 * await app.listen({ host: "127.0.0.1", port: 8788 });
 */
export async function buildServer(options: BuildServerOptions): Promise<FastifyInstance> {
  const { logger, prefix = "", bodyLimit = 1024 * 1024, publicHosts = [], ...api } = options;
  const schemas = lazySchemaCompilers();
  const app = Fastify({
    ...(logger === undefined ? { logger: false } : { loggerInstance: logger }),
    genReqId: () => randomUUID(),
    forceCloseConnections: "idle",
    bodyLimit,
    schemaController: schemas.schemaController,
  }) as unknown as FastifyInstance;
  // Route schemas are built on first use, and the rest once the server listens (not before it can answer).
  app.addHook("onListen", async () => {
    void schemas.warm((error, route) => app.log.error({ err: error, ...route }, "route schema failed to build"));
  });
  const endUnusedConnections = trackUnusedConnections(app.server);
  app.addHook("preClose", async () => endUnusedConnections());
  app.setNotFoundHandler(notFoundHandler);
  app.setErrorHandler(makeErrorHandler(api.errorLogger ?? logger ?? null));
  guardRequests(app, { extra: hostNamesFor(api.listenHost ?? "127.0.0.1", publicHosts), configKey: "gateway.publicHosts" });
  await app.register(apiRoutes, { ...api, ...(logger !== undefined && api.errorLogger === undefined ? { errorLogger: logger } : {}), prefix });
  return app;
}
