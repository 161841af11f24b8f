/**
 * {@link SystemdManager}: the gateway's unit through `systemctl` and `journalctl` (with
 * `--user` for a user unit). Whether systemd runs is asked of `systemctl` itself
 * (`show-environment` answers only when it can reach the manager).
 *
 * @module
 */
import { runProgram, programSaid, type ProgramResult } from "./run-program.js";
import { ServiceManagerError } from "./service-errors.js";
import type { LogsCommand, ServiceManager, ServiceState } from "./service-manager.js";
import { SYSTEMD_UNIT_NAME, type ServiceScope, type ServiceSpec } from "./service-spec.js";
import { systemdUnitPath, systemdUnitText } from "./systemd-unit.js";

/** The gateway's systemd unit, user or system. */
export class SystemdManager implements ServiceManager {
  readonly name = "systemd" as const;
  readonly scope: ServiceScope;
  readonly definitionPath: string;
  readonly #env: NodeJS.ProcessEnv;

  /** @param env The environment the programs run with (PATH, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, HOME, XDG_CONFIG_HOME). */
  constructor(scope: ServiceScope, env: NodeJS.ProcessEnv) {
    this.scope = scope;
    this.#env = env;
    this.definitionPath = systemdUnitPath(scope, env);
  }

  definitionText(spec: ServiceSpec): string {
    return systemdUnitText(spec);
  }

  #scopeArgs(): string[] {
    return this.scope === "user" ? ["--user"] : [];
  }

  #systemctl(...args: string[]): Promise<ProgramResult> {
    return runProgram("systemctl", [...this.#scopeArgs(), ...args], this.#env);
  }

  async #must(...args: string[]): Promise<ProgramResult> {
    const result = await this.#systemctl(...args);
    if (result.code !== 0) {
      throw new ServiceManagerError(`systemctl ${[...this.#scopeArgs(), ...args].join(" ")} failed: ${programSaid(result)}`);
    }
    return result;
  }

  async unavailable(): Promise<string | null> {
    const result = await this.#systemctl("show-environment");
    if (result.missing) return "systemctl is not installed";
    return result.code === 0 ? null : programSaid(result);
  }

  async activate(options: { changed: boolean; start: boolean }): Promise<string[]> {
    const said: string[] = [];
    if (options.changed) await this.#must("daemon-reload");
    await this.#must("enable", SYSTEMD_UNIT_NAME);
    said.push(`enabled ${SYSTEMD_UNIT_NAME} (starts with ${this.scope === "user" ? "your user manager" : "the system"})`);
    if (!options.start) return said;
    const wasRunning = (await this.state()).running;
    if (options.changed && wasRunning) {
      await this.#must("restart", SYSTEMD_UNIT_NAME);
      said.push("restarted it with the new definition (the old process drained first)");
    } else {
      await this.#must("start", SYSTEMD_UNIT_NAME);
      said.push(wasRunning ? "it was running already" : "started it");
    }
    return said;
  }

  async deactivate(): Promise<void> {
    await this.#must("disable", "--now", SYSTEMD_UNIT_NAME);
  }

  async forget(): Promise<void> {
    await this.#systemctl("daemon-reload");
    await this.#systemctl("reset-failed", SYSTEMD_UNIT_NAME);
  }

  async control(verb: "start" | "stop" | "restart"): Promise<void> {
    await this.#must(verb, SYSTEMD_UNIT_NAME);
  }

  async state(): Promise<ServiceState> {
    const result = await this.#must("show", SYSTEMD_UNIT_NAME, "--property=ActiveState,SubState,MainPID,StateChangeTimestamp");
    const props = new Map<string, string>();
    for (const line of result.stdout.split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) props.set(line.slice(0, at), line.slice(at + 1).trim());
    }
    const active = props.get("ActiveState") ?? "unknown";
    const sub = props.get("SubState") ?? "";
    const pid = Number(props.get("MainPID") ?? "0");
    const since = props.get("StateChangeTimestamp") ?? "";
    return {
      running: ["active", "activating", "deactivating", "reloading"].includes(active),
      state: sub === "" ? active : `${active} (${sub})`,
      since: since === "" || since === "n/a" ? null : since,
      pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null,
    };
  }

  async recentLogs(lines: number): Promise<string[]> {
    const result = await runProgram("journalctl", [...this.#scopeArgs(), "-u", SYSTEMD_UNIT_NAME, "-n", String(lines), "--no-pager", "-o", "cat"], this.#env);
    if (result.code !== 0) return [];
    return result.stdout.split("\n").filter((line) => line.trim() !== "" && line !== "-- No entries --");
  }

  logsCommand(options: { lines: number; follow: boolean }): LogsCommand {
    return {
      program: "journalctl",
      args: [...this.#scopeArgs(), "-u", SYSTEMD_UNIT_NAME, "-n", String(options.lines), "--no-pager", ...(options.follow ? ["-f"] : [])],
    };
  }
}
