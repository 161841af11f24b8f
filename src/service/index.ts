/**
 * Running the gateway as a service: the definitions (systemd unit, launchd plist, the
 * `service.env` file) generated from a {@link ServiceSpec} by pure functions, and the managers
 * (`systemctl`/`journalctl`, `launchctl`) the `threadline service` commands drive. Not a
 * package entry point.
 *
 * @module
 */
export {
  checkServiceSpec,
  gatewayLogPath,
  LAUNCHD_LABEL,
  RESTART_DELAY_SECONDS,
  serveArguments,
  serviceEnvPath,
  STOP_MARGIN_SECONDS,
  stopTimeoutSeconds,
  SYSTEMD_UNIT_NAME,
  type ServiceManagerName,
  type ServiceScope,
  type ServiceSpec,
} from "./service-spec.js";
export { escapeSpecifiers, execArgument, execCommandLine, environmentAssignment, systemdWord } from "./systemd-quoting.js";
export { START_LIMIT_BURST, START_LIMIT_INTERVAL_SECONDS, systemdUnitPath, systemdUnitText } from "./systemd-unit.js";
export { launchdPlistPath, launchdPlistText, launchdProgramArguments } from "./launchd-plist.js";
export { envFileLine, isServiceVariable, mergeEnvFile, readEnvFile, serviceVariables, SERVICE_ENV_NAMES, type EnvFileMerge } from "./service-env-file.js";
export { readIfExists, removeDefinition, writeDefinition, writeServiceEnv, type EnvFileWrite } from "./service-files.js";
export { ServiceManagerError, WITHOUT_A_MANAGER } from "./service-errors.js";
export { defaultManagerName, type LogsCommand, type ServiceManager, type ServiceState } from "./service-manager.js";
export { SystemdManager } from "./systemd-manager.js";
export { LaunchdManager } from "./launchd-manager.js";
export { probeHealth, reachableHost, type HealthAnswer } from "./health-probe.js";
export { builtCliEntry } from "./cli-entry.js";
export { runProgram, type ProgramResult } from "./run-program.js";
