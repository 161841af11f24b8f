/**
 * `threadline service logs [--manager M] [--system] [-n N] [--no-follow]`: runs `journalctl -u
 * threadline.service` (with `--user` for the user unit) or `tail` on launchd's log file, its
 * output going to this command's streams, until it ends or Ctrl-C / SIGTERM stops it.
 *
 * The action of the command defined in logs-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { ServiceManagerError } from "../../../service/index.js";
import type { CliIo } from "../../cli-io.js";
import { chooseManager, requireManager } from "./service-setup.js";
import type { ServiceOptions } from "./service-options.js";

interface LogsOptions extends ServiceOptions {
  lines: number;
  follow: boolean;
}

/** Runs `logs`: the action of makeServiceLogsCommand (in logs-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: LogsOptions): Promise<void> {
  const manager = chooseManager(io, options);
  await requireManager(manager);
  const { program, args } = manager.logsCommand({ lines: options.lines, follow: options.follow });
  const child = spawn(program, args, { env: io.env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(io.stdout, { end: false });
  child.stderr.pipe(io.stderr, { end: false });
  const stop = (): void => {
    child.kill("SIGTERM");
  };
  io.signals.on("SIGINT", stop);
  io.signals.on("SIGTERM", stop);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", (error) => reject(new ServiceManagerError(`Could not run ${program}: ${error.message}`, { cause: error })));
      child.once("close", (exit) => resolve(exit));
    });
    if (code !== null && code !== 0) io.exitCode = 1;
  } finally {
    io.signals.off("SIGINT", stop);
    io.signals.off("SIGTERM", stop);
  }
}
