/**
 * The definition of `threadline serve` (arguments, options, help); its action (serve-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option, type AddHelpTextContext } from "commander";
import type { CliIo } from "../cli-io.js";
import { portOption } from "../command-options.js";
import { lazyAction } from "../action-loading.js";
import { bindEnv } from "../option-env.js";

/** The "Model:" and "Exit codes:" sections of `serve --help`, laid out like the options. */
function serveHelp(context: AddHelpTextContext): string {
  const helper = context.command.createHelp();
  const output = context.command.configureOutput();
  const width = (context.error ? output.getErrHelpWidth?.() : output.getOutHelpWidth?.()) ?? 80;
  helper.prepareContext({ helpWidth: width });
  const paragraph = (text: string): string =>
    helper
      .boxWrap(text, width - 2)
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n");
  const codes: Array<[string, string]> = [
    ["0", "stopped by SIGTERM/SIGINT (after draining running turns)"],
    ["1", "failed to start (port in use, database unreachable) or to shut down"],
    ["2", "invalid option, config or provider setting (the message names it)"],
    ["3", "the --config file does not exist"],
  ];
  return [
    "",
    helper.styleTitle("Model:"),
    paragraph(
      "The agent calls an OpenAI-compatible API. Set provider: (baseUrl, apiKey, model) in the config file, or " +
        "OPENAI_BASE_URL and/or OPENAI_API_KEY with THREADLINE_MODEL in the environment (the file wins). Without a " +
        "base URL or key, replies come from the echo agent.",
    ),
    "  e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1 THREADLINE_MODEL=llama3.1 threadline serve",
    "",
    ...helper.formatItemList(
      "Exit codes:",
      codes.map(([code, meaning]) => helper.formatItem(code, 1, meaning, helper)),
      helper,
    ),
  ].join("\n");
}

/** Builds the `serve` command. */
export function makeServeCommand(io: CliIo): Command {
  return new Command("serve")
    .description("run the gateway: api-server on http://127.0.0.1:8787, sessions in the database, until SIGTERM/SIGINT")
    .addOption(bindEnv(new Option("--config <file>", "config file (YAML)"), "THREADLINE_CONFIG"))
    .addOption(bindEnv(new Option("--db <target>", "database: a SQLite file or a postgres:// URL"), "THREADLINE_DB"))
    .addOption(portOption("gateway.port"))
    .addOption(new Option("--host <host>", "HTTP host (overrides gateway.host)"))
    .addHelpText("after", serveHelp)
    .action(lazyAction(io, () => import("./serve-action.js")));
}
