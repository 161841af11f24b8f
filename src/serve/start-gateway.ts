/**
 * Starts a complete gateway: store, restart recovery, agent, adapters, HTTP server
 * (`/healthz`, `/metrics`, the HTTP adapters, with `api.enabled` the HTTP API, and the web
 * page at `/ui` unless `ui.enabled` is false),
 * expiry watcher — and stops it gracefully.
 * The `threadline serve` command is a thin shell around {@link startGateway}.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { HeuristicTitler, type Agent, type Titler, type TurnSpeaker } from "../agents/index.js";
import { ApiServerAdapter, WebhookAdapter, type ApiServerModels } from "../adapters/index.js";
import {
  adapterStateInMeta,
  ExpiryWatcher,
  GatewayRecovery,
  GatewayRunner,
  hashIdentifier,
  leaseHolderName,
  redactLogFields,
  staleHolderTest,
  urlOriginForLog,
  SessionQueue,
  SessionRouter,
  type Adapter,
  type ContextWindowResolver,
  type GatewayLogger,
  type InboundMessage,
  type StartupReport,
} from "../gateway/internal.js";
import {
  apiRoutes,
  checkApiAccess,
  guardRequests,
  hostNamesFor,
  isLoopbackHost,
  lazySchemaCompilers,
  uiRoutes,
  type ApiOptions,
  type GatewayLiveSource,
} from "../http-api/internal.js";
import type { ContextWindow } from "../context/index.js";
import { INBOUND_CLAIM_RETENTION_SECONDS, InvalidInputError } from "../store/index.js";
import { gatewayLiveSource } from "./gateway-live-status.js";
import { openSessionDB, type SessionDB } from "../store/index.js";
import { chooseAgent } from "./agent-choice.js";
import { createChatAdapters } from "./chat-adapters.js";
import { chatPlatformAccess, configuredChatPlatforms, configuredChatSections } from "./chat-config.js";
import { deferredGatewayMetrics } from "./deferred-metrics.js";
import { homesWithOwner } from "./owner-identities.js";
import type { ServeConfig } from "./serve-config.js";

/** How often `serve` looks for pending handoffs (ms). */
const HANDOFF_POLL_MS = 1000;
/**
 * How long after it listens `serve` starts the work nothing waits for (ms): the first
 * auto-prune, inbound-claims prune and media sweep, creating the metrics registry and building
 * the route schemas not used yet. Until then the gateway answers its first requests.
 */
const BACKGROUND_START_MS = 1000;

/** Options of {@link startGateway}. */
export interface StartGatewayOptions {
  config: ServeConfig;
  /** The database target (`--db`, THREADLINE_DB, the config file, else the default file). */
  database?: string;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Replaces the agent built from the config (tests, embedding). */
  agentFactory?: () => Agent;
}

/** A running gateway. */
export interface RunningGateway {
  runner: GatewayRunner;
  store: SessionRouter;
  /** The database this gateway opened (and closes when it stops). */
  db: SessionDB;
  http: FastifyInstance;
  /** `http://host:port` the HTTP server listens on. */
  url: string;
  /** What restart recovery found. */
  startup: StartupReport<InboundMessage>;
  /**
   * Drains; a turn still running at the drain timeout is interrupted and its session marked
   * `shutdown_timeout` (`restart_timeout` when `reason` is `"restart"`), and then no
   * clean-shutdown marker is written (the next start resumes it); otherwise writes the
   * marker. Closes everything.
   */
  stop(reason?: string): Promise<{ drained: boolean; stillRunning: string[] }>;
}

/**
 * One access-log line per request, at info level: method, route (the pattern, not the
 * raw URL, so no ids or query strings), status, duration and, for the OpenAI-compatible
 * endpoint, a hash of the session key (never the key, a token or a body).
 */
function logRequests(http: FastifyInstance, logger: Logger): void {
  // Logged when the response closes (not in onResponse), so streamed replies that take the
  // response over from Fastify (stream: true) get their line too.
  http.addHook("onRequest", async (request, reply) => {
    reply.raw.once("close", () => {
      // Fastify builds a new object on every read of routeOptions: read it once.
      const options = request.routeOptions;
      const line: Record<string, unknown> = {
        reqId: request.id,
        method: request.method,
        // A route may name itself for the log (a webhook path that is itself a secret).
        route: (options.config as { logAs?: unknown } | undefined)?.logAs ?? options.url ?? "(no route)",
        status: reply.raw.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
      };
      if (!reply.raw.writableFinished) line["aborted"] = true;
      if (request.url.startsWith("/v1/") && reply.raw.statusCode !== 401 && reply.raw.statusCode !== 403) {
        const header = request.headers["x-threadline-session-key"];
        const body = request.body as { user?: unknown } | null | undefined;
        const key = (Array.isArray(header) ? header[0] : header) ?? (typeof body?.user === "string" ? body.user : undefined);
        if (key !== undefined && key !== "") line["sessionKeyHash"] = hashIdentifier(key);
      }
      logger.info(line, "request");
    });
  });
}

/** The platform webhooks this config receives over the gateway's HTTP server (empty: none). */
export function webhookReceivers(config: ServeConfig): string[] {
  const { adapters } = config;
  const chat = configuredChatPlatforms(adapters).flatMap(({ platform, section }) => platform.webhookReceiver(section) ?? []);
  return [...(adapters.webhook.enabled ? ["adapters.webhook"] : []), ...chat];
}

/** The public URLs the configured chat platforms are sent to (a Telegram webhook's URL): the gateway answers to their hosts. */
function chatPublicUrls(config: ServeConfig): Array<string | null> {
  return configuredChatPlatforms(config.adapters).map(({ platform, section }) => platform.publicUrl(section));
}

/**
 * Why keyless access must not be given (`null`: it may, to loopback clients): the gateway
 * receives platform webhooks, so it is meant to be reached from outside (through a proxy
 * whose requests come from 127.0.0.1), or it listens on a non-loopback address.
 */
export function exposure(config: ServeConfig): string | null {
  const receivers = webhookReceivers(config);
  if (receivers.length > 0) return `this gateway receives platform webhooks (${receivers.join(", ")}), so it is reachable from outside`;
  if (!isLoopbackHost(config.gateway.host)) return `gateway.host ${config.gateway.host} is not a loopback address`;
  return null;
}

/** The 401 message of a keyless surface on an exposed gateway. */
function keylessRefusal(reason: string, key: string): string {
  return `Refused: ${reason}, and requests without a key are never accepted then. Configure ${key} (see docs/http.md) and send one.`;
}

/** Where `serve` mounts the web page. */
const UI_PATH = "/ui";
/** Where `serve` mounts the API for the web page when `api.enabled` is false. */
const UI_API_PATH = `${UI_PATH}/api`;

/**
 * Mounts the web page (`ui.enabled`, default on) at `/ui` with the API it needs: the
 * configured API when `api.enabled`, else the same API routes at `/ui/api` with the same
 * keys (without keys: loopback clients only, which needs a loopback `gateway.host`; on
 * another host without keys the page is not served and a warning says why).
 * Returns whether the page is served.
 */
async function mountWebPage(
  http: FastifyInstance,
  config: ServeConfig,
  db: ApiOptions["db"],
  logger: Logger,
  gatewayLive: GatewayLiveSource,
): Promise<boolean> {
  if (!config.ui.enabled) return false;
  if (config.api.enabled) {
    await http.register(uiRoutes, { prefix: UI_PATH, apiPrefix: config.api.prefix });
    return true;
  }
  const keys = config.api.keys;
  if (keys.length === 0 && !isLoopbackHost(config.gateway.host)) {
    logger.warn(
      { host: config.gateway.host },
      `web page not served: gateway.host ${config.gateway.host} is not a loopback address and api.keys is empty. Add api.keys (docs/web.md) or set ui.enabled: false.`,
    );
    return false;
  }
  const exposed = exposure(config);
  if (keys.length === 0 && exposed !== null) {
    logger.warn({}, `web page API answers 401: ${exposed}; configure api.keys (docs/web.md) to use the page`);
  }
  await http.register(apiRoutes, {
    db,
    keys,
    allowUnauthenticatedLoopback: keys.length === 0 || config.api.allowUnauthenticatedLoopback,
    listenHost: config.gateway.host,
    trustProxy: config.gateway.trustProxy,
    keylessRefusal: keys.length === 0 && exposed !== null ? keylessRefusal(exposed, "api.keys") : null,
    errorLogger: logger,
    prefix: UI_API_PATH,
    gatewayLive,
  });
  await http.register(uiRoutes, { prefix: UI_PATH, apiPrefix: UI_API_PATH });
  return true;
}

/** Starts a gateway. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config, logger } = options;
  const env = options.env ?? process.env;
  const lifecycle = config.lifecycle;
  // Refuse an unsafe API before anything starts (no keys, or no keys on a non-loopback host).
  if (config.api.enabled) checkApiAccess(config.api, config.gateway.host);
  const exposed = exposure(config);
  if (config.api.enabled && config.api.keys.length === 0 && exposed !== null) {
    // Asked for explicitly (api.enabled with allowUnauthenticatedLoopback): refused, never served open.
    throw new InvalidInputError(
      `api.keys: the HTTP API is enabled without keys, but ${exposed}. A keyless admin API is refused then: ` +
        "add api.keys (each { key: <16+ characters>, userId? }) and adapters.apiServer.tokens, or set api.enabled: false.",
      { field: "api.keys" },
    );
  }
  const fromEnv = env["THREADLINE_DB"]?.trim() ? env["THREADLINE_DB"] : undefined;
  const target = (options.database?.trim() ? options.database : undefined) ?? fromEnv ?? config.database ?? undefined;
  const db = await openSessionDB(target, { synchronous: config.storage.synchronous });
  logger.info({ database: db.location, backend: db.capabilities.backend }, "store open");

  const store = new SessionRouter({
    db,
    keySettings: lifecycle.keySettings,
    reset: lifecycle.reset,
    resumeFreshnessSeconds: lifecycle.resumeFreshnessSeconds,
  });
  const useLeases = config.gateway.leases === "on" || (config.gateway.leases === "auto" && db.capabilities.multiHost);
  // Restart bookkeeping is per replica name (stable across restarts); a lease holder is one
  // process (its pid added), so a restarted replica never takes over its predecessor's token.
  const self = { replicaId: config.gateway.replicaId, host: hostname(), pid: process.pid };
  const holder = leaseHolderName(self);
  // The leases a dead earlier process of this replica on this host held are taken over at once.
  const stale = staleHolderTest(self);
  const recovery = new GatewayRecovery(store, {
    gatewayId: useLeases ? config.gateway.replicaId.replace(/[^\w-]/gu, "_").slice(0, 64) : "main",
  });
  const skipKey = useLeases
    ? async (key: string): Promise<boolean> => {
        const lease = await db.getLease(key);
        return lease !== null && lease.holder !== holder && !stale(lease.holder) && lease.expiresAt > store.clock.now();
      }
    : undefined;
  const startup = await recovery.startup<InboundMessage>(skipKey ? { skipKey } : {});
  logger.info(
    {
      cleanShutdown: startup.cleanShutdown,
      interrupted: startup.interrupted.length,
      suspendedByGuard: startup.suspended.length,
      autoResume: startup.autoResume.length,
      bootLoop: startup.bootLoop,
    },
    startup.bootLoop ? "restart loop detected: skipping auto-resume this boot" : "restart recovery done",
  );

  let agentFactory: () => Agent;
  let titler: Titler | null;
  let memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null = null;
  let models: ApiServerModels | null = null;
  let contextWindow: ContextWindowResolver | undefined;
  if (options.agentFactory) {
    agentFactory = options.agentFactory;
    titler = config.titles.enabled ? new HeuristicTitler() : null;
  } else {
    const choice = chooseAgent(config, env, db, {
      onToolsRefused: ({ model, providerMessage }) =>
        logger.warn(
          { model, providerMessage },
          "the model provider refused tools: this process sends its requests without them from now on (set provider.tools: off to skip the refused first request)",
        ),
      onImagesRefused: ({ model, providerMessage }) =>
        logger.warn(
          { model, providerMessage },
          "the model provider refused images: this process sends this model each image as a short text note from now on (set provider.vision: off to skip the refused first request, or on if the model does take images)",
        ),
    });
    agentFactory = choice.factory;
    titler = choice.titler;
    contextWindow = choice.contextWindow;
    logContextWindow(choice.defaultWindow, logger);
    memoryFor = choice.memoryFor;
    if (choice.provider === null) logger.warn({}, `using the built-in ${choice.describe}`);
    else {
      models = { default: choice.provider.model, aliases: choice.provider.models };
      logger.info(
        {
          baseUrl: choice.provider.baseUrl,
          model: choice.provider.model,
          models: choice.provider.models,
          tools: choice.provider.tools,
          vision: choice.provider.vision,
          transcriptionModel: choice.provider.transcriptionModel ?? null,
        },
        "model provider configured",
      );
    }
  }

  const adapters: Adapter[] = [];
  // Keep-alive connections must not hold a shutdown open.
  // Route schemas are built when first used or in the background after listen, not before it.
  const schemas = lazySchemaCompilers();
  const http = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    forceCloseConnections: true,
    genReqId: () => randomUUID(),
    schemaController: schemas.schemaController,
  });
  logRequests(http, logger);
  // Every route: Host must name this gateway, and browsers may not post across sites (docs/http.md).
  const hostNames = hostNamesFor(config.gateway.host, config.gateway.publicHosts, chatPublicUrls(config));
  guardRequests(http, { extra: hostNames, configKey: "gateway.publicHosts" });
  const receivers = webhookReceivers(config);
  if (receivers.length > 0 && config.gateway.publicHosts.length === 0) {
    logger.warn(
      { receivers },
      "platform webhooks are enabled but gateway.publicHosts is empty: requests that name another host than localhost" +
        (hostNames.length > 0 ? ` or ${hostNames.join(", ")}` : "") +
        " are refused (403); list the public host name your proxy serves in gateway.publicHosts",
    );
  }
  let runnerRef: GatewayRunner | null = null;
  // The registry (and prom-client) is created after listen: see deferred-metrics.ts.
  const metrics = deferredGatewayMetrics(() => ({ activeTurns: runnerRef?.activeTurns ?? 0, liveAgents: runnerRef?.agents.size ?? 0 }));
  if (config.adapters.apiServer.enabled) {
    const apiTokens = config.adapters.apiServer.tokens;
    const api = new ApiServerAdapter({
      tokens: apiTokens,
      trustProxy: config.gateway.trustProxy,
      keylessRefusal: apiTokens.length === 0 && exposed !== null ? keylessRefusal(exposed, "adapters.apiServer.tokens") : null,
      replyTimeoutMs: config.adapters.apiServer.replyTimeoutSeconds * 1000,
      models,
      logger,
    });
    api.routes(http);
    adapters.push(api);
    logger.info(
      {},
      api.requiresToken
        ? `api-server: bearer tokens required (${apiTokens.length} configured)`
        : exposed !== null
          ? `api-server: no tokens configured and ${exposed}, so every /v1 request is refused (401); configure adapters.apiServer.tokens`
          : "api-server: no tokens configured, so only clients on this machine (loopback) are allowed",
    );
    const operatorTokens = apiTokens.filter((t) => typeof t === "string").length;
    if (operatorTokens > 0) {
      logger.warn(
        { operatorTokens },
        `api-server: ${operatorTokens} operator token(s) (plain strings in adapters.apiServer.tokens) may act as anyone: any "user" and any session key. ` +
          "Give each person their own { token, userId } entry.",
      );
    }
  }
  if (config.adapters.webhook.enabled) {
    const webhook = new WebhookAdapter({
      secret: config.adapters.webhook.secret!,
      callbackUrl: config.adapters.webhook.callbackUrl,
      path: config.adapters.webhook.path,
      // Never the payload (the reply's text, the chat's ids): what failed and for which kind of message.
      onDeliveryFailure: (error, payload) =>
        logger.error(
          { err: error, kind: (payload as { kind?: unknown } | null)?.kind ?? null, callback: urlOriginForLog(config.adapters.webhook.callbackUrl) },
          "webhook reply could not be delivered",
        ),
    });
    webhook.routes(http);
    adapters.push(webhook);
    // The callback's origin only: its path or query often is a secret.
    logger.info({ path: config.adapters.webhook.path, callback: urlOriginForLog(config.adapters.webhook.callbackUrl) }, "webhook adapter enabled");
  }
  // Chat platforms (Telegram, …): each SDK is loaded only when its section is configured.
  // They are created now (webhook-style ones mount their routes) and connected after listen.
  let chatAdapters: Adapter[];
  try {
    chatAdapters = await createChatAdapters(config.adapters, {
      http,
      logger,
      state: (platform) => adapterStateInMeta(db, platform),
      admins: config.gateway.admins,
    });
  } catch (error) {
    await db.close();
    throw error;
  }
  const httpAdapters = [...adapters];
  adapters.push(...chatAdapters);

  const runner = new GatewayRunner({
    store,
    queue: new SessionQueue(db, { clock: store.clock, maxDepth: lifecycle.maxQueueDepth }),
    agentFactory,
    // The HTTP adapters connect at start (before listen); the chat platforms after listen, through addAdapter.
    adapters: httpAdapters,
    titler,
    ...(contextWindow === undefined ? {} : { contextWindow }),
    ...(config.gateway.historyLimit === undefined ? {} : { historyLimit: config.gateway.historyLimit }),
    contextConfig: {
      connectedPlatforms: adapters.map((adapter) => adapter.platform),
      homeChannels: Object.fromEntries(
        Object.entries(config.homeChannels).map(([platform, c]) => [platform, c.name === null ? { chatId: c.chatId } : { chatId: c.chatId, name: c.name }]),
      ),
    },
    redactPii: lifecycle.redactPii,
    media: config.media,
    logger,
    metrics: metrics.hooks,
    leases: useLeases ? { holder, ttlSeconds: config.gateway.leaseTtlSeconds, stale } : null,
    access: chatPlatformAccess(config.adapters, config.gateway.admins),
    pairingStore: db,
    compression: {
      settings: config.compression,
      beforeResetTimeoutSeconds: config.gateway.beforeResetTimeoutSeconds,
      // The same name after a restart: the lease a killed run held is taken over at once.
      holder: `${config.gateway.replicaId}:compress`,
    },
    ...(memoryFor === null ? {} : { memoryFor }),
  });
  logAccessModes(config, logger);
  runnerRef = runner;

  if (config.api.enabled) {
    await http.register(apiRoutes, {
      db,
      keys: config.api.keys,
      allowUnauthenticatedLoopback: config.api.allowUnauthenticatedLoopback,
      listenHost: config.gateway.host,
      trustProxy: config.gateway.trustProxy,
      errorLogger: logger,
      prefix: config.api.prefix,
      gatewayLive: gatewayLiveSource(runner),
    });
    logger.info(
      { prefix: config.api.prefix || "/", keys: config.api.keys.length, scopedKeys: config.api.keys.filter((k) => k.userId !== null).length },
      config.api.keys.length > 0 ? "HTTP API enabled (API keys required)" : "HTTP API enabled without keys: loopback clients only",
    );
  }

  const uiMounted = await mountWebPage(http, config, db, logger, gatewayLiveSource(runner));

  // Chat platforms whose adapter is still connecting (after listen): /healthz names them.
  const connecting = new Set(chatAdapters.map((adapter) => adapter.platform));
  http.get("/healthz", async (_request, reply) => {
    const ok = runner.accepting;
    return reply
      .code(ok ? 200 : 503)
      .send({ status: ok ? "ok" : "draining", activeTurns: runner.activeTurns, backend: db.capabilities.backend, connecting: [...connecting] });
  });
  http.get("/metrics", async (_request, reply) => {
    const { registry } = metrics.bundle();
    return reply.header("content-type", registry.contentType).send(await registry.metrics());
  });

  await runner.start({ buffer: startup.inbound });
  const address = await http.listen({ host: config.gateway.host, port: config.gateway.port });
  const url = address.replace("[::1]", "127.0.0.1");
  logger.info({ url }, `gateway listening on ${url}`);
  if (uiMounted) logger.info({ url: `${url}${UI_PATH}/` }, `web page: ${url}${UI_PATH}/`);

  // The chat platforms connect now that the gateway answers (a slow login or webhook
  // registration does not hold /healthz back); one that fails stops the start as before.
  try {
    for (const adapter of chatAdapters) {
      await runner.addAdapter(adapter);
      connecting.delete(adapter.platform);
    }
  } catch (error) {
    await runner.stop().catch(() => {});
    await http.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }

  const resumed = await runner.resume(startup.autoResume);
  const replayed = await runner.replayQueues();
  await startup.inbound.release();
  if (resumed + replayed > 0) logger.info({ resumed, replayed }, "resumed interrupted sessions and queued messages");

  const watcher = new ExpiryWatcher({
    store,
    agentCache: runner.agents,
    intervalSeconds: lifecycle.expiryIntervalSeconds,
    sessionStoreMaxAgeDays: lifecycle.sessionStoreMaxAgeDays,
    onError: (error, entry, attempt) => logger.warn(redactLogFields({ err: error, key: entry.key, attempt }), "session finalize hook failed"),
    // Before an automatic reset, the session's agent (its live one, else a new one) may save what matters.
    beforeReset:
      config.gateway.beforeResetTimeoutSeconds > 0
        ? {
            agentFor: (entry) => runner.agents.get(entry.key) ?? agentFactory(),
            timeoutSeconds: config.gateway.beforeResetTimeoutSeconds,
            ...(contextWindow === undefined ? {} : { contextWindow }),
            ...(config.gateway.historyLimit === undefined ? {} : { historyLimit: config.gateway.historyLimit }),
            onError: (error, entry) =>
              logger.warn(redactLogFields({ err: error, key: entry.key, sessionId: entry.sessionId }), "before-reset turn failed; the session resets anyway"),
            memoryFor,
          }
        : null,
  });
  watcher.start();
  const prune = (): void => {
    void db
      .autoPrune({
        olderThanDays: config.autoPrune.retentionDays,
        intervalSeconds: config.autoPrune.minIntervalHours * 3600,
        vacuum: config.autoPrune.vacuum,
      })
      .then(({ ran, deleted }) => {
        if (ran) logger.info({ deleted, retentionDays: config.autoPrune.retentionDays }, "auto-prune ran");
      })
      .catch((error: unknown) => logger.warn({ err: error }, "auto-prune failed"));
  };
  let pruneTimer: NodeJS.Timeout | null = null;
  if (config.autoPrune.enabled) {
    pruneTimer = setInterval(prune, 3600_000);
    pruneTimer.unref();
  }
  // Inbound claims (one per platform message) are kept while a platform may still redeliver the message, then go.
  // Stored media nothing refers to any more (a turn that died before writing its message, an
  // import whose session was refused) goes in the same hourly pass, once past its grace period.
  const pruneClaims = (): void => {
    void db
      .pruneInboundClaims({ before: store.clock.now() - INBOUND_CLAIM_RETENTION_SECONDS })
      .catch((error: unknown) => logger.warn({ err: error }, "pruning inbound claims failed"));
    void db
      .sweepMedia()
      .then((removed) => {
        if (removed > 0) logger.info({ removed }, "media sweep removed blobs nothing refers to");
      })
      .catch((error: unknown) => logger.warn({ err: error }, "media sweep failed"));
  };
  const claimsTimer = setInterval(pruneClaims, 3600_000);
  claimsTimer.unref();
  // The first passes, the metrics registry and the remaining route schemas: once the gateway has answered its first requests.
  const warming = new AbortController();
  const background = setTimeout(() => {
    if (config.autoPrune.enabled) prune();
    pruneClaims();
    metrics.bundle();
    void schemas.warm((error, route) => logger.error({ err: error, ...route }, "route schema failed to build"), warming.signal);
  }, BACKGROUND_START_MS);
  background.unref();
  let sweep: NodeJS.Timeout | null = null;
  if (useLeases) {
    sweep = setInterval(
      () => void runner.sweep().catch((error: unknown) => logger.warn({ err: error }, "replica sweep failed")),
      config.gateway.leaseTtlSeconds * 1000,
    );
    sweep.unref();
  }

  // Cross-platform handoffs (`/handoff <platform>` in `threadline chat`): look every second.
  let handoffPass: Promise<unknown> = Promise.resolve();
  // A home channel without a `userId` in a chat with a session per person continues the owner's
  // lane when `gateway.owner` names the owner's id there (the owner is one person everywhere).
  const handoffHomes = homesWithOwner(config.homeChannels, config.gateway.owner);
  const handoffTimer = setInterval(() => {
    handoffPass = runner.processHandoffs(handoffHomes).catch((error: unknown) => logger.warn({ err: error }, "processing handoffs failed"));
  }, HANDOFF_POLL_MS);
  handoffTimer.unref();

  let stopping: Promise<{ drained: boolean; stillRunning: string[] }> | null = null;
  const stop = (reason = "stop"): Promise<{ drained: boolean; stillRunning: string[] }> => {
    stopping ??= (async () => {
      logger.info({ reason }, "shutting down: draining running turns");
      clearTimeout(background);
      warming.abort();
      if (sweep !== null) clearInterval(sweep);
      if (pruneTimer !== null) clearInterval(pruneTimer);
      clearInterval(claimsTimer);
      clearInterval(handoffTimer);
      await watcher.stop();
      const result = await runner.drain(config.gateway.drainTimeoutSeconds * 1000);
      // A handoff in progress ends (failed, if its summary turn was cut off) before the store closes.
      await handoffPass;
      if (result.drained) {
        // Turns of platforms this gateway does not serve (a `threadline chat` running on the
        // same database) are not this gateway's to mark.
        const served = new Set(adapters.map((adapter) => adapter.platform));
        const notOurs = async (key: string): Promise<boolean> =>
          !served.has((await db.getRoute(key))?.platform ?? "") || (skipKey !== undefined && (await skipKey(key)));
        await recovery.shutdown({ skipKey: notOurs });
      } else {
        for (const key of result.stillRunning) await recovery.markDrainTimeout(key, reason === "restart");
        logger.warn({ stillRunning: result.stillRunning.length }, "drain timed out: those sessions resume on the next start");
      }
      await runner.stop();
      await http.close();
      await db.close();
      logger.info({ drained: result.drained }, "gateway stopped");
      return result;
    })();
    return stopping;
  };

  return { runner, store, db, http, url, startup, stop };
}

/**
 * Says at startup how each chat platform decides who may talk to the agent: once (info) when
 * `pairing` was picked because the section has neither `access` nor `allowedUsers`, and as a
 * warning when `access: open` answers everyone.
 */
function logAccessModes(config: ServeConfig, logger: GatewayLogger): void {
  for (const [platform, section] of configuredChatSections(config.adapters)) {
    if (section.access === "open") {
      logger.warn({ platform }, `${platform}: adapters.${platform}.access is open: everyone who messages the bot is answered by the agent`);
    } else if (section.accessDefaulted) {
      logger.info(
        { platform },
        `${platform}: adapters.${platform}.access is not set and allowedUsers is empty, so pairing is used: an unknown sender gets a code, and \`threadline pairing approve ${platform} <code>\` lets them in`,
      );
    }
  }
}

/**
 * Says once, at start, which context window the default model gets and where it came from:
 * at info from the configuration or the table, at warn for the default (set provider.contextWindow).
 */
function logContextWindow(window: ContextWindow & { model: string | null }, logger: Pick<GatewayLogger, "info" | "warn">): void {
  const fields = { model: window.model, contextWindow: window.tokens, source: window.source };
  if (window.source === "default") {
    logger.warn(
      fields,
      `context window: ${window.tokens} tokens (the default: ${window.model === null ? "no model is configured" : `${window.model} is not in the table of well-known models`}); ` +
        "set provider.contextWindow to the model's window (with Ollama, its num_ctx)",
    );
  } else {
    logger.info(
      fields,
      `context window: ${window.tokens} tokens for ${window.model} (from ${window.source === "config" ? "the configuration" : "the table of well-known models"})`,
    );
  }
}
