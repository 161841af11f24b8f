/**
 * `threadline serve`: runs the gateway until SIGTERM/SIGINT, then drains and exits 0.
 *
 * @module
 */
import { Command, Option } from "commander";
import { pino } from "pino";
import { startGateway } from "../../serve/index.js";
import { loadServeConfig, portOption } from "../command-options.js";

/** Builds the `serve` command. */
export function makeServeCommand(): Command {
  return new Command("serve")
    .description("run the gateway: api-server on http://127.0.0.1:8787, sessions in the database, until SIGTERM/SIGINT")
    .addOption(new Option("--config <file>", "config file (YAML)").env("THREADLINE_CONFIG"))
    .addOption(new Option("--db <target>", "database: a SQLite file or a postgres:// URL").env("THREADLINE_DB"))
    .addOption(portOption("gateway.port"))
    .addOption(new Option("--host <host>", "HTTP host (overrides gateway.host)"))
    .action(async (options: { config?: string; db?: string; port?: number; host?: string }) => {
      const config = await loadServeConfig(options.config);
      if (options.port !== undefined) config.gateway.port = options.port;
      if (options.host !== undefined) config.gateway.host = options.host;
      const logger = pino({ level: config.gateway.logLevel, base: { pid: process.pid } });
      const gateway = await startGateway({ config, logger, ...(options.db ? { database: options.db } : {}) });
      const shutdown = (signal: string): void => {
        void gateway.stop(signal).then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, "shutdown failed");
            process.exit(1);
          },
        );
      };
      process.once("SIGTERM", () => shutdown("SIGTERM"));
      process.once("SIGINT", () => shutdown("SIGINT"));
    });
}
