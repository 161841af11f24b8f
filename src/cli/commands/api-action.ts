/**
 * `threadline api`: runs the HTTP API alone (no gateway) on `api.host`/`api.port` of the
 * config file, with the web page at `/ui` (unless `ui.enabled: false`), with pino logs on stdout, until SIGTERM/SIGINT: then it stops accepting
 * requests, lets running ones finish (up to 10 s), closes the database and exits 0. It owns
 * its process (it exits it when stopped), so it runs only as the bin (tests start it as a
 * child process); its config and database come from the io's environment.
 *
 * The action of the command defined in api-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { pino } from "pino";
import { buildServer, checkApiAccess, uiRoutes } from "../../http-api/index.js";
import { openSessionDB } from "../../store/index.js";
import { databaseTarget } from "../cli-context.js";
import type { CliIo } from "../cli-output.js";
import { loadServeConfig } from "../serve-config-file.js";

/** How long a stop waits for running requests (a long export) before closing anyway. */
const DRAIN_MS = 10_000;

/** Runs `api`: the action of makeApiCommand (in api-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: { config?: string; db?: string; port?: number; host?: string }): Promise<void> {
  // Without a config file there are no keys: the API then refuses to start (unless loopback is allowed).
  const config = await loadServeConfig(options.config, io.env);
  const host = options.host ?? config.api.host;
  const port = options.port ?? config.api.port;
  checkApiAccess(config.api, host); // before the database is opened
  const logger = pino({ level: config.gateway.logLevel, base: { pid: process.pid } });
  const target = options.db?.trim() ? options.db : (config.database ?? undefined);
  const db = await openSessionDB(target ?? databaseTarget(undefined, io.env), { synchronous: config.storage.synchronous });
  logger.info({ database: db.location, backend: db.capabilities.backend }, "store open");
  let app: Awaited<ReturnType<typeof buildServer>> | undefined;
  try {
    app = await buildServer({
      db,
      keys: config.api.keys,
      allowUnauthenticatedLoopback: config.api.allowUnauthenticatedLoopback,
      listenHost: host,
      publicHosts: config.gateway.publicHosts,
      trustProxy: config.gateway.trustProxy,
      logger,
      prefix: config.api.prefix,
    });
    // The web page (docs/web.md) at /ui, over this API, unless ui.enabled is false.
    if (config.ui.enabled) await app.register(uiRoutes, { prefix: "/ui", apiPrefix: config.api.prefix });
    const address = await app.listen({ host, port });
    const url = address.replace("[::1]", "127.0.0.1");
    logger.info({ url, keys: config.api.keys.length }, `HTTP API listening on ${url}`);
    if (config.ui.enabled) logger.info({ url: `${url}/ui/` }, `web page: ${url}/ui/`);
  } catch (error) {
    await app?.close().catch(() => {});
    await db.close();
    throw error;
  }
  const server = app;
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing running requests");
    const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), DRAIN_MS).unref());
    void Promise.race([server.close().then(() => "closed" as const), timeout])
      .then(async (how) => {
        if (how === "timeout") logger.warn({ drainMs: DRAIN_MS }, "requests still running after the drain time; closing anyway");
        await db.close();
        logger.info({}, "HTTP API stopped");
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      });
  };
  io.signals.once("SIGTERM", () => shutdown("SIGTERM"));
  io.signals.once("SIGINT", () => shutdown("SIGINT"));
}
