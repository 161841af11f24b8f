/**
 * {@link LaunchdManager}: the gateway's agent through `launchctl` (the `gui/<uid>` domain) and
 * its log file. Not run on macOS here: docs/deploy.md says what was tested.
 *
 * @module
 */
import { runProgram, programSaid, type ProgramResult } from "./run-program.js";
import { ServiceManagerError } from "./service-errors.js";
import type { LogsCommand, ServiceManager, ServiceState } from "./service-manager.js";
import { gatewayLogPath, LAUNCHD_LABEL, type ServiceSpec } from "./service-spec.js";
import { launchdPlistPath, launchdPlistText } from "./launchd-plist.js";
import { readFile } from "node:fs/promises";

/** The gateway's launchd agent (per user). */
export class LaunchdManager implements ServiceManager {
  readonly name = "launchd" as const;
  readonly scope = "user" as const;
  readonly definitionPath: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #domain: string;
  readonly #logPath: string;

  /**
   * @param env The environment the programs run with.
   * @param uid The user's id (`gui/<uid>` domain).
   * @param home THREADLINE_HOME (for the log file).
   */
  constructor(env: NodeJS.ProcessEnv, uid: number, home: string) {
    this.#env = env;
    this.#domain = `gui/${uid}`;
    this.#logPath = gatewayLogPath(home);
    this.definitionPath = launchdPlistPath(env);
  }

  definitionText(spec: ServiceSpec): string {
    return launchdPlistText(spec);
  }

  #launchctl(...args: string[]): Promise<ProgramResult> {
    return runProgram("launchctl", args, this.#env);
  }

  async #must(...args: string[]): Promise<ProgramResult> {
    const result = await this.#launchctl(...args);
    if (result.code !== 0) throw new ServiceManagerError(`launchctl ${args.join(" ")} failed: ${programSaid(result)}`);
    return result;
  }

  get #target(): string {
    return `${this.#domain}/${LAUNCHD_LABEL}`;
  }

  async #loaded(): Promise<boolean> {
    return (await this.#launchctl("print", this.#target)).code === 0;
  }

  async unavailable(): Promise<string | null> {
    const result = await this.#launchctl("print", this.#domain);
    if (result.missing) return "launchctl is not installed";
    return result.code === 0 ? null : programSaid(result);
  }

  async activate(options: { changed: boolean; start: boolean }): Promise<string[]> {
    const loaded = await this.#loaded();
    if (loaded && !options.changed) return ["the agent was loaded already"];
    if (loaded) await this.#must("bootout", this.#target);
    if (!options.start) return ["written; load it with: threadline service start"];
    await this.#must("bootstrap", this.#domain, this.definitionPath);
    return [loaded ? "reloaded the agent with the new definition (the old process drained first)" : "loaded and started the agent (it starts at login)"];
  }

  async deactivate(): Promise<void> {
    if (await this.#loaded()) await this.#must("bootout", this.#target);
  }

  async forget(): Promise<void> {}

  async control(verb: "start" | "stop" | "restart"): Promise<void> {
    const loaded = await this.#loaded();
    if (verb === "stop") {
      if (loaded) await this.#must("bootout", this.#target);
    } else if (!loaded) await this.#must("bootstrap", this.#domain, this.definitionPath);
    else await this.#must("kickstart", ...(verb === "restart" ? ["-k"] : []), this.#target);
  }

  async state(): Promise<ServiceState> {
    const result = await this.#launchctl("print", this.#target);
    if (result.code !== 0) return { running: false, state: "not loaded", since: null, pid: null };
    const state = /^\s*state = (.+)$/mu.exec(result.stdout)?.[1]?.trim() ?? "unknown";
    const pid = Number(/^\s*pid = (\d+)$/mu.exec(result.stdout)?.[1] ?? "0");
    return { running: state === "running", state, since: null, pid: pid > 0 ? pid : null };
  }

  async recentLogs(lines: number): Promise<string[]> {
    try {
      const text = await readFile(this.#logPath, "utf8");
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .slice(-lines);
    } catch {
      return [];
    }
  }

  logsCommand(options: { lines: number; follow: boolean }): LogsCommand {
    return { program: "tail", args: ["-n", String(options.lines), ...(options.follow ? ["-F"] : []), this.#logPath] };
  }
}
