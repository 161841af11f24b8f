/**
 * `threadline serve`: runs the gateway until SIGTERM/SIGINT, then drains and exits 0. It owns
 * its process (it exits it when stopped), so it runs only as the bin (tests start it as a
 * child process); its config, database and platform tokens come from the io's environment.
 *
 * The action of the command defined in serve-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { pino } from "pino";
import { startGateway } from "../../serve/index.js";
import type { CliIo } from "../cli-output.js";
import { loadServeConfig } from "../serve-config-file.js";

/** Runs `serve`: the action of makeServeCommand (in serve-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: { config?: string; db?: string; port?: number; host?: string }): Promise<void> {
  const config = await loadServeConfig(options.config, io.env);
  if (options.port !== undefined) config.gateway.port = options.port;
  if (options.host !== undefined) config.gateway.host = options.host;
  const logger = pino({ level: config.gateway.logLevel, base: { pid: process.pid } });
  const gateway = await startGateway({ config, logger, env: io.env, ...(options.db ? { database: options.db } : {}) });
  const shutdown = (signal: string): void => {
    void gateway.stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  io.signals.once("SIGTERM", () => shutdown("SIGTERM"));
  io.signals.once("SIGINT", () => shutdown("SIGINT"));
}
