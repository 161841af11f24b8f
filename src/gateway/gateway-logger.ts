/**
 * The logger the gateway and its adapters write to ({@link GatewayLogger}, pino-compatible),
 * and the one that drops everything ({@link noopLogger}), used where none is given.
 *
 * @module
 */

/** Minimal structured logger (pino-compatible). */
export interface GatewayLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

/** A {@link GatewayLogger} that drops everything (the default where no logger is given). */
export const noopLogger: GatewayLogger = { info() {}, warn() {}, error() {} };
