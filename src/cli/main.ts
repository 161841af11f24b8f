#!/usr/bin/env node
/**
 * The `threadline` command. This release only prints its version and help; session
 * management commands come next.
 *
 * @module
 */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

const HELP = `Usage: threadline [--version] [--help]

Threadline: the session layer for AI agents and chat gateways.
Sessions live in $THREADLINE_HOME/state.db (default ~/.threadline/state.db).

Options:
  -V, --version  print the version
  -h, --help     print this help
`;

const [arg] = process.argv.slice(2);
if (arg === "-V" || arg === "--version") {
  process.stdout.write(`${pkg.version}\n`);
} else if (arg === undefined || arg === "-h" || arg === "--help") {
  process.stdout.write(HELP);
} else {
  process.stderr.write(`threadline: unknown command or option "${arg}". Run "threadline --help".\n`);
  process.exitCode = 2;
}
