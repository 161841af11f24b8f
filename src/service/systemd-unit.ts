/**
 * The systemd unit of the gateway (`threadline.service`), generated from a {@link ServiceSpec},
 * and where it goes. Pure: the same spec gives the same text, byte for byte.
 *
 * The unit is valid for systemd 252 (Debian 12): the crash back-off is `RestartSec=` with a
 * start limit (`StartLimitIntervalSec=`/`StartLimitBurst=`), not 254's `RestartSteps=`.
 * `Type=simple`: readiness through sd_notify needs an AF_UNIX datagram, which Node cannot send
 * without a native addon (docs/deploy.md says why none is used).
 *
 * @module
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { environmentAssignment, escapeSpecifiers, execCommandLine, systemdWord } from "./systemd-quoting.js";
import {
  checkServiceSpec,
  RESTART_DELAY_SECONDS,
  serveArguments,
  serviceEnvPath,
  stopTimeoutSeconds,
  SYSTEMD_UNIT_NAME,
  type ServiceScope,
  type ServiceSpec,
} from "./service-spec.js";

/** Starts counted for the crash back-off: more than this many within {@link START_LIMIT_INTERVAL_SECONDS} and systemd stops restarting. */
export const START_LIMIT_BURST = 5;

/** The window of {@link START_LIMIT_BURST}, in seconds. */
export const START_LIMIT_INTERVAL_SECONDS = 300;

/**
 * Where the unit goes: a user unit in `$XDG_CONFIG_HOME/systemd/user/` (else
 * `~/.config/systemd/user/`), a system unit in `/etc/systemd/system/`.
 */
export function systemdUnitPath(scope: ServiceScope, env: NodeJS.ProcessEnv): string {
  if (scope === "system") return join("/etc/systemd/system", SYSTEMD_UNIT_NAME);
  const configHome = env["XDG_CONFIG_HOME"]?.trim() ? env["XDG_CONFIG_HOME"] : join(env["HOME"]?.trim() ? env["HOME"] : homedir(), ".config");
  return join(configHome, "systemd", "user", SYSTEMD_UNIT_NAME);
}

/**
 * The unit's text. `ExecStart=` runs the spec's Node on the CLI's `serve`; `THREADLINE_HOME` is
 * the one `Environment=` line; everything secret comes from `EnvironmentFile=` (service.env).
 *
 * @throws {InvalidInputError} from {@link checkServiceSpec}.
 * @example
 * systemdUnitText({ nodePath: "/usr/bin/node", entryPath: "/opt/threadline/dist/cli/main.js", home: "/srv/tl",
 *   configPath: null, drainTimeoutSeconds: 30, scope: "user", runAs: null, extraWritablePaths: [] });
 */
export function systemdUnitText(spec: ServiceSpec): string {
  checkServiceSpec(spec);
  const system = spec.scope === "system";
  const writable = [spec.home, ...spec.extraWritablePaths.filter((p) => p !== spec.home)];
  const lines = [
    "# Written by `threadline service install`; run it again after changing Node, THREADLINE_HOME or the config path.",
    "# Secrets are in the EnvironmentFile (mode 0600), never on this file's command line.",
    "[Unit]",
    "Description=Threadline gateway (threadline serve)",
    ...(system ? ["Wants=network-online.target", "After=network-online.target"] : []),
    `StartLimitIntervalSec=${START_LIMIT_INTERVAL_SECONDS}`,
    `StartLimitBurst=${START_LIMIT_BURST}`,
    "",
    "[Service]",
    "Type=simple",
    ...(system ? [`User=${spec.runAs}`] : []),
    `ExecStart=${execCommandLine([spec.nodePath, ...serveArguments(spec)])}`,
    `Environment=${environmentAssignment("THREADLINE_HOME", spec.home)}`,
    `EnvironmentFile=${escapeSpecifiers(serviceEnvPath(spec.home))}`,
    "Restart=always",
    `RestartSec=${RESTART_DELAY_SECONDS}`,
    "KillSignal=SIGTERM",
    `TimeoutStopSec=${stopTimeoutSeconds(spec)}`,
    "SyslogIdentifier=threadline",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    `ReadWritePaths=${writable.map(systemdWord).join(" ")}`,
    "PrivateTmp=yes",
    ...(system
      ? [
          "ProtectHome=read-only",
          "PrivateDevices=yes",
          "ProtectKernelTunables=yes",
          "ProtectKernelModules=yes",
          "ProtectControlGroups=yes",
          "RestrictSUIDSGID=yes",
          "LockPersonality=yes",
        ]
      : []),
    "",
    "[Install]",
    `WantedBy=${system ? "multi-user.target" : "default.target"}`,
    "",
  ];
  return lines.join("\n");
}
