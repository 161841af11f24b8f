/**
 * `threadline service install [--dry-run] [--manager M] [--system] [--config F] [--run-as U] [--no-start]`:
 * writes `service.env` (merged, mode 0600) and the unit or plist, then enables and starts the
 * service. Again on an installed service: an unchanged definition is left alone ("up to
 * date"), a changed one is rewritten and the service restarted. With `--dry-run`: prints what
 * it would write (variable names, never values) and writes nothing, on any machine.
 *
 * The action of the command defined in install-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { serviceEnvPath, serviceVariables, writeDefinition, writeServiceEnv, mergeEnvFile, readIfExists, type ServiceManager } from "../../../service/index.js";
import { CliError } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";
import { chooseManager, managerNoun, requireManager, serviceSpec } from "./service-setup.js";
import type { ServiceOptions } from "./service-options.js";

interface InstallOptions extends ServiceOptions {
  dryRun?: boolean;
  runAs?: string;
  start?: boolean;
}

/** The manager commands install runs, as text (for the dry run). */
function plannedCommands(manager: ServiceManager): string {
  if (manager.name === "launchd") return `launchctl bootstrap gui/<uid> ${manager.definitionPath}`;
  const ctl = manager.scope === "user" ? "systemctl --user" : "systemctl";
  return `${ctl} daemon-reload && ${ctl} enable threadline.service && ${ctl} start threadline.service`;
}

/** The line about starting at boot. */
function bootLine(manager: ServiceManager): string {
  if (manager.name === "launchd") return "The agent starts when you log in (RunAtLoad) and is restarted whenever it exits (KeepAlive).";
  if (manager.scope === "system") return "The unit starts at boot (multi-user.target) and is restarted whenever it exits (Restart=always).";
  return "A user unit starts with your user manager (at login). To start it at boot without a login: loginctl enable-linger $USER";
}

/** Runs `install`: the action of makeServiceInstallCommand (in install-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: InstallOptions): Promise<void> {
  const manager = chooseManager(io, options);
  const { spec, config, entryBuilt } = await serviceSpec(io, options, manager);
  const text = manager.definitionText(spec);
  const variables = serviceVariables(io.env);
  const envPath = serviceEnvPath(spec.home);
  const names = variables.map(([name]) => name);
  const healthUrl = `http://${config.gateway.host}:${config.gateway.port}/healthz`;

  if (options.dryRun) {
    const merged = mergeEnvFile(await readIfExists(envPath), variables);
    const out = [
      `# threadline service install --dry-run: nothing was written. It would write the ${managerNoun(manager)}`,
      `# ${manager.definitionPath}:`,
      text.trimEnd(),
      "",
      `# and ${envPath} (mode 0600) with ${names.length === 0 ? "no variables from this environment" : `these variables from this environment (values not shown): ${names.join(", ")}`}` +
        (merged.kept.length === 0 ? "" : `; its other lines (${merged.kept.join(", ")}) kept`),
      `# then run: ${plannedCommands(manager)}`,
      ...(entryBuilt ? [] : [`# note: ${spec.entryPath} is not built here; run the installed threadline (or "npm run build") to install for real.`]),
    ];
    io.stdout.write(`${out.join("\n")}\n`);
    return;
  }

  await requireManager(manager);
  if (!entryBuilt)
    throw new CliError("TL_ERR_USAGE", `There is no built CLI at ${spec.entryPath}: run "npm run build" (or install the package) and use its threadline.`);
  if (manager.scope === "system") {
    if (process.getuid?.() !== 0)
      throw new CliError(
        "TL_ERR_USAGE",
        "A --system unit is written to /etc/systemd/system: run the command with sudo (keep THREADLINE_HOME, e.g. sudo THREADLINE_HOME=… threadline service install --system).",
      );
    if (!existsSync(spec.home)) {
      throw new CliError(
        "TL_ERR_USAGE",
        `${spec.home} does not exist: create it as the account the unit runs as first (sudo -u ${spec.runAs} mkdir -p ${spec.home}), then install again.`,
      );
    }
  }
  await mkdir(spec.home, { recursive: true, mode: 0o700 });
  if (manager.name === "launchd") await mkdir(`${spec.home}/logs`, { recursive: true, mode: 0o700 });
  const env = await writeServiceEnv(envPath, variables);
  const wrote = await writeDefinition(manager.definitionPath, text);
  const lines = [
    wrote ? `Wrote the ${managerNoun(manager)} ${manager.definitionPath}` : `Already installed, up to date: ${manager.definitionPath}`,
    `${env.changed ? "Wrote" : "Kept"} ${envPath} (mode 0600${env.modeFixed ? ", tightened from a looser mode" : ""}): ` +
      (names.length === 0 ? "no variables from this environment" : `${names.join(", ")} from this environment (values not shown)`) +
      (env.kept.length === 0 ? "" : `; kept ${env.kept.join(", ")}`),
  ];
  lines.push(...(await manager.activate({ changed: wrote || env.changed, start: options.start !== false })));
  lines.push(`It serves ${healthUrl}; check it with: threadline service status`, bootLine(manager));
  io.stdout.write(`${lines.join("\n")}\n`);
}
