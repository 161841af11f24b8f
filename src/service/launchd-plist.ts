/**
 * The launchd agent of the gateway (`dev.threadline.gateway`), generated from a
 * {@link ServiceSpec}, and where it goes. Pure: the same spec gives the same text.
 *
 * launchd has no environment file, so the plist runs `node --env-file=<service.env>` (Node
 * reads the file itself) and holds no secret: its only environment variable is
 * THREADLINE_HOME.
 *
 * @module
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { InvalidInputError } from "../store/index.js";
import {
  checkServiceSpec,
  gatewayLogPath,
  LAUNCHD_LABEL,
  RESTART_DELAY_SECONDS,
  serveArguments,
  serviceEnvPath,
  stopTimeoutSeconds,
  type ServiceSpec,
} from "./service-spec.js";

/** Where the agent's plist goes: `~/Library/LaunchAgents/dev.threadline.gateway.plist` (HOME from `env`). */
export function launchdPlistPath(env: NodeJS.ProcessEnv): string {
  return join(env["HOME"]?.trim() ? env["HOME"] : homedir(), "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
}

/** Escapes text for an XML element. */
function xml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const string = (text: string): string => `<string>${xml(text)}</string>`;

/** The program arguments of the agent: Node with `--env-file`, then the CLI's `serve`. */
export function launchdProgramArguments(spec: ServiceSpec): string[] {
  return [spec.nodePath, `--env-file=${serviceEnvPath(spec.home)}`, ...serveArguments(spec)];
}

/**
 * The plist's text: `KeepAlive` (restarted whenever it exits), `RunAtLoad`, a
 * `ThrottleInterval` between restarts, stdout and stderr to `$THREADLINE_HOME/logs/gateway.log`,
 * and an `ExitTimeOut` longer than the drain.
 *
 * @throws {InvalidInputError} from {@link checkServiceSpec} (and for a system scope: launchd agents are per user).
 */
export function launchdPlistText(spec: ServiceSpec): string {
  checkServiceSpec(spec);
  if (spec.scope !== "user") {
    throw new InvalidInputError("launchd: Threadline installs a per-user agent (~/Library/LaunchAgents); leave out --system.", { field: "scope" });
  }
  const log = gatewayLogPath(spec.home);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `threadline service install`. Secrets are in service.env (mode 0600), read by Node (its env-file option). -->",
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  ${string(LAUNCHD_LABEL)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...launchdProgramArguments(spec).map((arg) => `    ${string(arg)}`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    "    <key>THREADLINE_HOME</key>",
    `    ${string(spec.home)}`,
    "  </dict>",
    "  <key>WorkingDirectory</key>",
    `  ${string(spec.home)}`,
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <true/>",
    "  <key>ThrottleInterval</key>",
    `  <integer>${RESTART_DELAY_SECONDS}</integer>`,
    "  <key>ExitTimeOut</key>",
    `  <integer>${stopTimeoutSeconds(spec)}</integer>`,
    "  <key>ProcessType</key>",
    `  ${string("Background")}`,
    "  <key>StandardOutPath</key>",
    `  ${string(log)}`,
    "  <key>StandardErrorPath</key>",
    `  ${string(log)}`,
    "</dict>",
    "</plist>",
    "",
  ];
  return lines.join("\n");
}
