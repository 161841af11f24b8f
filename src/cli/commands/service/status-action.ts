/**
 * `threadline service status [--manager M] [--system] [--config F] [-n N] [--json]`: whether the
 * service runs (the manager's state, since when, its main PID), `GET /healthz` of the
 * configured host and port, and the last lines of its log. Exit 0 when it runs and is healthy,
 * 1 when it runs but /healthz is not ok, 3 when it does not run.
 *
 * The action of the command defined in status-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { probeHealth } from "../../../service/index.js";
import { EXIT } from "../../cli-errors.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { chooseManager, managerNoun, requireInstalled, requireManager, serviceConfig } from "./service-setup.js";
import type { ServiceOptions } from "./service-options.js";

interface StatusOptions extends ServiceOptions {
  lines: number;
  json?: boolean;
}

/** Runs `status`: the action of makeServiceStatusCommand (in status-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: StatusOptions): Promise<void> {
  const manager = chooseManager(io, options);
  await requireManager(manager);
  requireInstalled(manager);
  const { config } = await serviceConfig(io, options);
  const [state, logs, health] = await Promise.all([
    manager.state(),
    options.lines > 0 ? manager.recentLogs(options.lines) : Promise.resolve([]),
    probeHealth(config.gateway.host, config.gateway.port),
  ]);
  io.exitCode = !state.running ? EXIT.notFound : health.ok ? EXIT.ok : EXIT.failure;
  const linger = manager.name === "systemd" && manager.scope === "user";
  if (options.json) {
    writeJson(io, { manager: manager.name, scope: manager.scope, definition: manager.definitionPath, ...state, health, logs });
    return;
  }
  const out = [
    `${managerNoun(manager)} ${manager.definitionPath}`,
    `  State:   ${state.state}${state.since === null ? "" : ` since ${state.since}`}`,
    `  PID:     ${state.pid ?? "-"}`,
    `  Health:  GET ${health.url}: ${health.summary}`,
    ...(linger ? ["  Boot:    starts at login; to start it at boot without a login: loginctl enable-linger $USER"] : []),
  ];
  if (options.lines > 0) {
    out.push(logs.length === 0 ? "No log lines yet." : `Last ${logs.length} log line(s):`, ...logs.map((line) => `  ${line}`));
  }
  io.stdout.write(`${out.join("\n")}\n`);
}
