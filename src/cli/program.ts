/**
 * The `threadline` program: {@link makeProgram} builds the commander program on a
 * {@link CliIo}, and {@link runCli} runs one command line on it and returns the exit code.
 * The bin (`main.ts`) is `runCli` on the process's own io; tests run the very same code in
 * process with their own streams and environment.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ERROR_EXIT_CODE, EXIT, reportError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { makeApiCommand } from "./commands/api-command.js";
import { makeChatCommand } from "./commands/chat-command.js";
import { makeConfigCommand } from "./commands/config-command.js";
import { makeDbCommand } from "./commands/db-command.js";
import { makeDoctorCommand } from "./commands/doctor-command.js";
import { makeInsightsCommand } from "./commands/insights-command.js";
import { makeMcpCommand } from "./commands/mcp-command.js";
import { makeMemoryCommand } from "./commands/memory-command.js";
import { makePairingCommand } from "./commands/pairing-command.js";
import { makeServeCommand } from "./commands/serve-command.js";
import { makeServiceCommand } from "./commands/service-command.js";
import { makeSessionsCommand } from "./commands/sessions-command.js";
import { prepareLazyHelpFor } from "./lazy-help.js";
import { applyOptionEnv } from "./option-env.js";
import { addTopLevel } from "./top-level.js";
import { applyUsageErrorStyle } from "./usage-errors.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

/**
 * Builds the program: every command, writing to and reading from `io`, its options bound to
 * `io.env` (THREADLINE_DB, THREADLINE_CONFIG). {@link runCli} adds the usage-error style and
 * runs it.
 */
export function makeProgram(io: CliIo): Command {
  const program = new Command("threadline")
    .usage("[options] [command]")
    .description(
      "Threadline: the session layer for AI agents and chat gateways. Sessions live in $THREADLINE_HOME/state.db " +
        "(default ~/.threadline/state.db); THREADLINE_DB or --db names another database (a SQLite file or a postgres:// URL). " +
        "The gateway reads $THREADLINE_HOME/config.yaml.",
    )
    .version(pkg.version, "-V, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .showSuggestionAfterError(true);
  addTopLevel(program, io);
  program.addCommand(makeSessionsCommand(io));
  program.addCommand(makeInsightsCommand(io));
  program.addCommand(makeChatCommand(io));
  program.addCommand(makeServeCommand(io));
  program.addCommand(makeServiceCommand(io));
  program.addCommand(makeApiCommand(io));
  program.addCommand(makeMcpCommand(io));
  program.addCommand(makeConfigCommand(io));
  program.addCommand(makePairingCommand(io));
  program.addCommand(makeMemoryCommand(io));
  program.addCommand(makeDoctorCommand(io));
  program.addCommand(makeDbCommand(io));
  applyOptionEnv(program, io);
  return program;
}

/**
 * Runs `threadline <argv>` on `io` and resolves with its exit code: 0 (or what a command set
 * in `io.exitCode`), 2 for a usage error (already written to `io.stderr` in the threadline
 * style), else the code of the error, whose `threadline: <message>` line goes to `io.stderr`.
 * Help and `--version` go to `io.stdout` and end with 0. Nothing exits the process: parse
 * errors, help and version come back as a code (commander's `exitOverride`), and commander's
 * output goes to the io's streams (`configureOutput`).
 *
 * @param argv The arguments after the program name (`process.argv.slice(2)`).
 * @param io Where the run reads and writes; give each run its own (`io.exitCode` is set to 0 first).
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIo());
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  io.exitCode = EXIT.ok;
  const program = makeProgram(io);
  applyUsageErrorStyle(program, io);
  try {
    await prepareLazyHelpFor(program, argv);
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end with 0. Every other parse failure (unknown option, missing or extra
      // argument, a group run without a subcommand) is a usage error, already written in the threadline style.
      if (!(error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.exitCode === 0)) io.exitCode = ERROR_EXIT_CODE.TL_ERR_USAGE;
    } else {
      io.exitCode = reportError(io, error);
    }
  }
  return io.exitCode;
}
