#!/usr/bin/env node
/**
 * The `threadline` command.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { processIo, type CliIo } from "./cli-output.js";
import { reportError } from "./cli-context.js";
import { makeApiCommand } from "./commands/api-command.js";
import { makeChatCommand } from "./commands/chat-command.js";
import { makeConfigCommand } from "./commands/config-command.js";
import { makeInsightsCommand } from "./commands/insights-command.js";
import { makeDoctorCommand } from "./commands/doctor-command.js";
import { makeServeCommand } from "./commands/serve-command.js";
import { makeSessionsCommand } from "./commands/sessions-command.js";
import { addTopLevel } from "./top-level.js";
import { applyUsageErrorStyle } from "./usage-errors.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

/** Builds the program (tests run it in-process with exitOverride). */
export function makeProgram(io: CliIo = processIo()): Command {
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
  program.addCommand(makeServeCommand());
  program.addCommand(makeApiCommand());
  program.addCommand(makeConfigCommand(io));
  program.addCommand(makeDoctorCommand(io));
  return program;
}

async function main(): Promise<void> {
  const io = processIo();
  // A reader that stops early (`threadline sessions list | head`) is not an error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
  });
  const program = makeProgram(io);
  applyUsageErrorStyle(program, io);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.exitCode === 0) return;
      // Every other parse failure (unknown option, missing or extra argument, a group run
      // without a subcommand) is a usage error; it was already written in the threadline style.
      process.exitCode = 2;
      return;
    }
    process.exitCode = reportError(io, error);
  }
}

await main();
