/**
 * The service spec: the few facts every service definition (systemd unit, launchd plist, env
 * file) is generated from, and the rules they share (names, paths, the stop timeout). Pure:
 * nothing here reads the machine.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { InvalidInputError } from "../store/index.js";

/** A user service (the default: runs as you, starts at login or, with linger, at boot) or a system one (`--system`). */
export type ServiceScope = "user" | "system";

/** The service managers Threadline writes definitions for. */
export type ServiceManagerName = "systemd" | "launchd";

/** The systemd unit's name. */
export const SYSTEMD_UNIT_NAME = "threadline.service";

/** The launchd agent's label (and the plist's base name). */
export const LAUNCHD_LABEL = "dev.threadline.gateway";

/**
 * Seconds added to `gateway.drainTimeoutSeconds` for the stop timeout (systemd
 * `TimeoutStopSec=`, launchd `ExitTimeOut`): after the drain the gateway still closes its
 * adapters, HTTP server and database (a SQLite checkpoint), which takes well under this.
 */
export const STOP_MARGIN_SECONDS = 15;

/** Seconds between a crash and the restart (systemd `RestartSec=`, launchd `ThrottleInterval`). */
export const RESTART_DELAY_SECONDS = 5;

/** Everything a service definition is generated from. */
export interface ServiceSpec {
  /** Absolute path of the Node binary that runs the gateway (the installing one: `process.execPath`). */
  nodePath: string;
  /** Real absolute path of the CLI's `dist/cli/main.js`. */
  entryPath: string;
  /** Absolute THREADLINE_HOME of the service (its data, `service.env`, launchd's log). */
  home: string;
  /** Absolute path of the config file passed as `serve --config`, or `null` (serve reads `$THREADLINE_HOME/config.yaml` if it appears). */
  configPath: string | null;
  /** `gateway.drainTimeoutSeconds` of that config. */
  drainTimeoutSeconds: number;
  scope: ServiceScope;
  /** The account a system unit runs as (`User=`); `null` for a user service. */
  runAs: string | null;
  /** Further absolute directories the gateway writes (a SQLite database outside the home); the home is always writable. */
  extraWritablePaths: string[];
}

/** The stop timeout of a spec, in whole seconds: the drain timeout (rounded up) plus {@link STOP_MARGIN_SECONDS}. */
export function stopTimeoutSeconds(spec: Pick<ServiceSpec, "drainTimeoutSeconds">): number {
  return Math.ceil(spec.drainTimeoutSeconds) + STOP_MARGIN_SECONDS;
}

/** The service's environment file: `$THREADLINE_HOME/service.env` (mode 0600; the secrets live there). */
export function serviceEnvPath(home: string): string {
  return join(home, "service.env");
}

/** The launchd agent's log file: `$THREADLINE_HOME/logs/gateway.log`. */
export function gatewayLogPath(home: string): string {
  return join(home, "logs", "gateway.log");
}

/** The arguments after the Node binary: `<entryPath> serve [--config <configPath>]`. */
export function serveArguments(spec: Pick<ServiceSpec, "entryPath" | "configPath">): string[] {
  return [spec.entryPath, "serve", ...(spec.configPath === null ? [] : ["--config", spec.configPath])];
}

/**
 * Checks a spec before anything is generated from it: every path absolute and free of line
 * breaks and control characters (neither a unit file nor a plist line could hold them
 * safely), a drain timeout ≥ 0, a `runAs` for a system unit only.
 *
 * @throws {InvalidInputError} naming the field and what to do.
 */
export function checkServiceSpec(spec: ServiceSpec): ServiceSpec {
  const paths: Array<[string, string | null]> = [
    ["nodePath", spec.nodePath],
    ["entryPath", spec.entryPath],
    ["home", spec.home],
    ["configPath", spec.configPath],
    ...spec.extraWritablePaths.map((p, i): [string, string] => [`extraWritablePaths[${i}]`, p]),
  ];
  for (const [field, path] of paths) {
    if (path === null) continue;
    if (!isAbsolute(path)) throw new InvalidInputError(`${field}: the service needs an absolute path (got ${JSON.stringify(path)}).`, { field });
    if (/[\u0000-\u001f\u007f]/u.test(path)) {
      throw new InvalidInputError(
        `${field}: ${JSON.stringify(path)} holds a line break or control character, which a service file cannot carry; move it to a plain path.`,
        {
          field,
        },
      );
    }
  }
  if (!Number.isFinite(spec.drainTimeoutSeconds) || spec.drainTimeoutSeconds < 0) {
    throw new InvalidInputError(`drainTimeoutSeconds: must be a number of seconds ≥ 0 (got ${spec.drainTimeoutSeconds}).`, { field: "drainTimeoutSeconds" });
  }
  if ((spec.scope === "system") !== (spec.runAs !== null)) {
    throw new InvalidInputError("runAs: a system unit names the account it runs as, a user service does not.", { field: "runAs" });
  }
  if (spec.runAs !== null && !/^[a-z_][a-z0-9_.-]*\$?$/iu.test(spec.runAs)) {
    throw new InvalidInputError(`runAs: ${JSON.stringify(spec.runAs)} is not a user name.`, { field: "runAs" });
  }
  return spec;
}
