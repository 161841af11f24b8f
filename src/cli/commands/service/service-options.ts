/**
 * The options every `threadline service` subcommand shares: `--manager` and `--system`, and
 * `--config` for those that read the gateway's config. Light: commander only.
 *
 * @module
 */
import { Option } from "commander";
import { bindEnv } from "../../option-env.js";

/** `--manager systemd|launchd` (default: launchd on macOS, systemd elsewhere). */
export function managerOption(): Option {
  return new Option("--manager <manager>", "the service manager (default: launchd on macOS, systemd elsewhere)").choices(["systemd", "launchd"]);
}

/** `--system`: a system unit (/etc/systemd/system, run as root) instead of a user unit. */
export function systemOption(): Option {
  return new Option("--system", "a system unit in /etc/systemd/system (run with sudo) instead of your user unit");
}

/** `--config <file>` (THREADLINE_CONFIG): the gateway's config file. */
export function serviceConfigOption(): Option {
  return bindEnv(new Option("--config <file>", "the gateway's config file (default: $THREADLINE_HOME/config.yaml if it exists)"), "THREADLINE_CONFIG");
}

/** What the shared options give an action. */
export interface ServiceOptions {
  manager?: "systemd" | "launchd";
  system?: boolean;
  config?: string;
}
