/**
 * Where matrix-js-sdk's own log lines go: the gateway's logger, at warn and error only, with
 * the access token removed. Two routes: the SDK's global loglevel logger (its sync loop and
 * HTTP layer; {@link routeSdkLogs}, pointed at the adapter created last by
 * {@link setSdkLogSink}) and the per-client logger given to `createClient`
 * ({@link clientSdkLogger}). The loggers of its call (MatrixRTC) support, which Threadline
 * does not use, are silenced (they report every invite as an "unknown room").
 *
 * @module
 */
import { format } from "node:util";
import type { GatewayLogger } from "../../gateway/index.js";
import { redactText } from "../chat/index.js";
import { MATRIX_PLATFORM } from "./matrix-source.js";

/** The type of matrix-js-sdk's `lib/logger.js` module (loaded lazily). */
export type SdkLoggerModule = typeof import("matrix-js-sdk/lib/logger.js");
/** The per-client logger interface of matrix-js-sdk. */
export type SdkLogger = import("matrix-js-sdk/lib/logger.js").Logger;

/** Where matrix-js-sdk's global log lines go (the adapter created last). */
let sdkLogSink: ((level: "warn" | "error", message: string) => void) | null = null;

/**
 * Routes matrix-js-sdk's global loglevel logger to the sink set by {@link setSdkLogSink} at
 * warn and above, and silences the loggers of its call (MatrixRTC) support.
 */
export function routeSdkLogs(module: SdkLoggerModule): void {
  const factory = (methodName: string): ((...args: unknown[]) => void) => {
    const level = methodName === "error" ? "error" : "warn";
    return (...args: unknown[]) => sdkLogSink?.(level, format(...args));
  };
  const root = module.logger;
  root.methodFactory = factory as typeof root.methodFactory;
  root.setLevel("warn", false);
  for (const name of ["MatrixRTCSession", "MatrixRTCSessionManager"]) (root.getChild(name) as typeof root).setLevel("silent", false);
}

/** Sends the SDK's global log lines to `log` (prefixed `matrix-js-sdk: `, `secrets` removed). */
export function setSdkLogSink(log: GatewayLogger, secrets: string[]): void {
  sdkLogSink = (level, message) => log[level]({ platform: MATRIX_PLATFORM }, `matrix-js-sdk: ${redactText(message, secrets)}`);
}

/** The SDK's per-client logger (`MatrixClient.logger`): warn and error lines only, `accessToken` removed. */
export function clientSdkLogger(log: GatewayLogger, accessToken: string, prefix = ""): SdkLogger {
  const line =
    (level: "warn" | "error") =>
    (...args: unknown[]) =>
      log[level]({ platform: MATRIX_PLATFORM }, `matrix-js-sdk: ${prefix}${redactText(format(...args), [accessToken])}`);
  const noop = (): void => {};
  return {
    trace: noop,
    debug: noop,
    info: noop,
    warn: line("warn"),
    error: line("error"),
    getChild: (name: string) => clientSdkLogger(log, accessToken, `${prefix}${name} `),
  };
}
