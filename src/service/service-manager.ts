/**
 * What the service commands ask of a service manager ({@link ServiceManager}), the state it
 * reports ({@link ServiceState}), and {@link defaultManagerName}: systemd on Linux and the
 * rest, launchd on macOS.
 *
 * @module
 */
import type { ServiceManagerName, ServiceScope, ServiceSpec } from "./service-spec.js";

/** Whether the service runs, as the manager says. */
export interface ServiceState {
  /** True while the manager has it running (or starting, or stopping). */
  running: boolean;
  /** The manager's words for the state, e.g. `active (running)`, `inactive (dead)`, `failed`. */
  state: string;
  /** When it last entered that state (the manager's text), or `null`. */
  since: string | null;
  /** Its main process, or `null`. */
  pid: number | null;
}

/** A program to run for the logs (`journalctl …`, `tail …`). */
export interface LogsCommand {
  program: string;
  args: string[];
}

/** One service manager for one scope. */
export interface ServiceManager {
  readonly name: ServiceManagerName;
  readonly scope: ServiceScope;
  /** Where the definition (unit or plist) goes. */
  readonly definitionPath: string;
  /** The definition's text for a spec. */
  definitionText(spec: ServiceSpec): string;
  /** `null` when the manager answers; else why not (its own words), for the refusal. */
  unavailable(): Promise<string | null>;
  /**
   * After the definition was written: reload it if it `changed`, enable it, and (unless `start`
   * is false) start it, restarting it when it changed and ran. Returns lines saying what it did.
   */
  activate(options: { changed: boolean; start: boolean }): Promise<string[]>;
  /** Before the definition is removed: stop (drain) and disable it. */
  deactivate(): Promise<void>;
  /** After the definition was removed: forget it (`daemon-reload`), best effort. */
  forget(): Promise<void>;
  /** `start`, `stop` (drains) or `restart`. */
  control(verb: "start" | "stop" | "restart"): Promise<void>;
  state(): Promise<ServiceState>;
  /** The last `lines` lines of its log (oldest first); empty when there is none. */
  recentLogs(lines: number): Promise<string[]>;
  /** The program that shows (or follows) its log. */
  logsCommand(options: { lines: number; follow: boolean }): LogsCommand;
}

/** The manager of a platform when `--manager` is not given: launchd on macOS, systemd elsewhere. */
export function defaultManagerName(platform: NodeJS.Platform): ServiceManagerName {
  return platform === "darwin" ? "launchd" : "systemd";
}
