/**
 * What the `threadline service` actions share: choosing the manager (`--manager`, `--system`),
 * refusing where it does not run, and the spec of the service from the run's environment and
 * config file.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  builtCliEntry,
  defaultManagerName,
  LaunchdManager,
  readEnvFile,
  readIfExists,
  serviceEnvPath,
  ServiceManagerError,
  SystemdManager,
  WITHOUT_A_MANAGER,
  type ServiceManager,
  type ServiceSpec,
} from "../../../service/index.js";
import type { ServeConfig } from "../../../serve/index.js";
import { defaultDatabasePath, InvalidInputError, NotFoundError, threadlineHome } from "../../../store/index.js";
import { CliError } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";
import { loadServeConfig } from "../../serve-config-file.js";
import type { ServiceOptions } from "./service-options.js";

/** The manager the options name, for the run's environment (not asked yet whether it runs). */
export function chooseManager(io: CliIo, options: ServiceOptions): ServiceManager {
  const name = options.manager ?? defaultManagerName(process.platform);
  if (name === "launchd") {
    if (options.system) throw new CliError("TL_ERR_USAGE", "--system is for systemd; launchd gets a per-user agent. Leave out --system.");
    return new LaunchdManager(io.env, process.getuid?.() ?? 0, threadlineHome(io.env));
  }
  return new SystemdManager(options.system ? "system" : "user", io.env);
}

/** What the manager is, in words: `systemd user unit`, `launchd agent`. */
export function managerNoun(manager: ServiceManager): string {
  return manager.name === "launchd" ? "launchd agent" : `systemd ${manager.scope} unit`;
}

/**
 * Refuses when the manager does not answer, saying what it said and what to run instead.
 *
 * @throws {ServiceManagerError}
 */
export async function requireManager(manager: ServiceManager): Promise<void> {
  const why = await manager.unavailable();
  if (why === null) return;
  const which =
    manager.name === "launchd" ? "launchd (launchctl)" : `systemd${manager.scope === "user" ? "'s user manager (systemctl --user)" : " (systemctl)"}`;
  throw new ServiceManagerError(`No service manager to install into: ${which} does not answer here (${why}). ${WITHOUT_A_MANAGER}`);
}

/** Refuses a subcommand on a service that is not installed (no definition file). */
export function requireInstalled(manager: ServiceManager): void {
  if (!existsSync(manager.definitionPath)) {
    throw new NotFoundError(`The ${managerNoun(manager)} is not installed (no ${manager.definitionPath}). Install it with: threadline service install`);
  }
}

/** The config file the service is given: `--config`/THREADLINE_CONFIG (absolute), else the default file if it exists, else none. */
export function serviceConfigPath(io: CliIo, options: ServiceOptions): { path: string | null; explicit: boolean } {
  if (options.config?.trim()) return { path: resolve(options.config), explicit: true };
  const fallback = resolve(threadlineHome(io.env), "config.yaml");
  return { path: existsSync(fallback) ? fallback : null, explicit: false };
}

/** The gateway's config, as the service will read it. */
export async function serviceConfig(io: CliIo, options: ServiceOptions): Promise<{ config: ServeConfig; path: string | null }> {
  const { path, explicit } = serviceConfigPath(io, options);
  return { config: await loadServeConfig(explicit && path !== null ? path : undefined, io.env), path };
}

/**
 * The SQLite database's folder when it is outside THREADLINE_HOME (the unit must let the gateway
 * write there): THREADLINE_DB of this environment, else of service.env, else the config's.
 */
async function databaseFolder(io: CliIo, config: ServeConfig, home: string): Promise<string | null> {
  const kept = readEnvFile((await readIfExists(serviceEnvPath(home))) ?? "")["THREADLINE_DB"];
  const fromEnv = io.env["THREADLINE_DB"]?.trim() ? io.env["THREADLINE_DB"] : kept?.trim() ? kept : undefined;
  const target = fromEnv ?? config.database ?? defaultDatabasePath(io.env);
  if (/^postgres(?:ql)?:\/\//iu.test(target) || target === ":memory:") return null;
  const folder = dirname(isAbsolute(target) ? target : resolve(target));
  return folder === home || folder.startsWith(`${home}/`) ? null : folder;
}

/** The spec the definition is generated from, and the config behind it. */
export async function serviceSpec(
  io: CliIo,
  options: ServiceOptions & { runAs?: string },
  manager: ServiceManager,
): Promise<{ spec: ServiceSpec; config: ServeConfig; entryBuilt: boolean }> {
  const home = threadlineHome(io.env);
  const { config, path } = await serviceConfig(io, options);
  let entryPath: string;
  let entryBuilt = true;
  try {
    entryPath = builtCliEntry();
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    entryPath = fileURLToPath(new URL("../../main.js", import.meta.url));
    entryBuilt = false;
  }
  const system = manager.scope === "system";
  const runAs = system ? (options.runAs ?? (io.env["SUDO_USER"]?.trim() ? io.env["SUDO_USER"] : userInfo().username)) : null;
  const folder = await databaseFolder(io, config, home);
  const spec: ServiceSpec = {
    nodePath: process.execPath,
    entryPath,
    home,
    configPath: path,
    drainTimeoutSeconds: config.gateway.drainTimeoutSeconds,
    scope: manager.scope,
    runAs,
    extraWritablePaths: folder === null ? [] : [folder],
  };
  return { spec, config, entryBuilt };
}
