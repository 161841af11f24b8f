/**
 * `threadline serve`: runs the gateway until SIGTERM/SIGINT, then drains and exits 0.
 *
 * @module
 */
import { Command, Option } from "commander";
import { pino } from "pino";
import { defaultConfigPath, readConfigFile } from "../../gateway/index.js";
import { parseServeConfig, startGateway } from "../../serve/index.js";
import { NotFoundError } from "../../store/index.js";

/** Builds the `serve` command. */
export function makeServeCommand(): Command {
  return new Command("serve")
    .description("run the gateway: api-server on http://127.0.0.1:8787, sessions in the database, until SIGTERM/SIGINT")
    .addOption(new Option("--config <file>", "config file (YAML)").env("THREADLINE_CONFIG"))
    .addOption(new Option("--db <target>", "database: a SQLite file or a postgres:// URL").env("THREADLINE_DB"))
    .addOption(new Option("--port <port>", "HTTP port (overrides gateway.port)").argParser((v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port must be a port number from 0 to 65535 (got "${v}")`);
      return n;
    }))
    .addOption(new Option("--host <host>", "HTTP host (overrides gateway.host)"))
    .action(async (options: { config?: string; db?: string; port?: number; host?: string }) => {
      const path = options.config || defaultConfigPath();
      let doc: Record<string, unknown> = {};
      try {
        doc = await readConfigFile(path);
      } catch (error) {
        // No config file is fine unless one was named explicitly.
        if (!(error instanceof NotFoundError) || options.config) throw error;
      }
      const config = parseServeConfig(doc);
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
