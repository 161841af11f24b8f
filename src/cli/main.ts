#!/usr/bin/env node
/**
 * The `threadline` command.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ThreadlineError } from "../store/index.js";
import { makeServeCommand } from "./commands/serve-command.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

/** Builds the program (tests run it in-process with exitOverride). */
export function makeProgram(): Command {
  const program = new Command("threadline")
    .usage("[command] [options]")
    .description(
      "Threadline: the session layer for AI agents and chat gateways. Sessions live in $THREADLINE_HOME/state.db " +
        "(default ~/.threadline/state.db); THREADLINE_DB or --db names another database (a SQLite file or a postgres:// URL). " +
        "The gateway reads $THREADLINE_HOME/config.yaml.",
    )
    .version(pkg.version, "-V, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .showSuggestionAfterError(true);
  program.addCommand(makeServeCommand());
  program.on("command:*", (operands: string[]) => {
    process.stderr.write(`threadline: unknown command or option "${operands[0]}". Run "threadline --help".\n`);
    process.exit(2);
  });
  return program;
}

async function main(): Promise<void> {
  const program = makeProgram().exitOverride();
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return;
      if (error.code === "commander.unknownOption" || error.code === "commander.unknownCommand") {
        process.exitCode = 2;
        return;
      }
      process.exitCode = error.exitCode || 2;
      return;
    }
    const message = error instanceof ThreadlineError ? `${error.message}` : (error as Error).message;
    process.stderr.write(`threadline: ${message}\n`);
    process.exitCode = 1;
  }
}

await main();
