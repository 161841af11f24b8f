#!/usr/bin/env node
/**
 * The `threadline` bin: {@link runCli} on the process's own streams, environment, signals and
 * exit code. Only what needs the real process stays here: a reader that stops early
 * (`threadline sessions list | head`) ends the process quietly.
 *
 * @module
 */
import { processIo } from "./cli-io.js";
import { runCli } from "./program.js";

// A reader that stops early (`threadline sessions list | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
});
process.exitCode = await runCli(process.argv.slice(2), processIo());
