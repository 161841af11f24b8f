/**
 * The definition of `threadline mcp` (arguments, options, help); its action (mcp-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../cli-io.js";
import { dbOption, portOption } from "../command-options.js";
import { lazyAction } from "../action-loading.js";
import { bindEnv } from "../option-env.js";

/** Builds the `mcp` command. */
export function makeMcpCommand(io: CliIo): Command {
  return new Command("mcp")
    .summary("serve sessions to MCP clients (Model Context Protocol) over stdio, or Streamable HTTP with --http")
    .description(
      "serve sessions to MCP clients (tools session_search, sessions_list, session_show; resources threadline://sessions/<id>): " +
        "over stdio, or over Streamable HTTP with --http (API keys from the config's api.keys; without keys, this machine only)",
    )
    .addOption(dbOption())
    .addOption(
      bindEnv(
        new Option("--config <file>", "config file (YAML): api.keys for --http, tools.sessionSearch and provider for search summaries"),
        "THREADLINE_CONFIG",
      ),
    )
    .addOption(new Option("--http", "serve Streamable HTTP (stateless, at /mcp) instead of stdio"))
    .addOption(portOption("the default 8789; --http only"))
    .addOption(new Option("--host <host>", "HTTP address to listen on (default 127.0.0.1; without api.keys only a loopback address); --http only"))
    .addOption(
      new Option(
        "--allowed-host <name>",
        "another name clients reach the HTTP server by, accepted in Host/Origin (repeatable; default: the loopback names)",
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(new Option("--allow-writes", "also offer session_rename and session_delete (without it they are not listed)"))
    .action(lazyAction(io, () => import("./mcp-action.js")));
}
