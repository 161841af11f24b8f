/**
 * `threadline config show | check | set`: the config file (`$THREADLINE_HOME/config.yaml`)
 * as the gateway and the CLI read it, validated with the same rules. The definitions are
 * here; each subcommand's action (config/*-action.ts) is loaded only when it runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../cli-io.js";
import { lazyAction } from "../action-loading.js";
import { bindEnv } from "../option-env.js";

/** `--config <file>` of the config subcommands. */
function configOption(): Option {
  return bindEnv(new Option("--config <file>", "config file (default $THREADLINE_HOME/config.yaml)"), "THREADLINE_CONFIG");
}

/** Builds the `config` command. */
export function makeConfigCommand(io: CliIo): Command {
  const config = new Command("config").description("show, check or change the config file");

  config
    .command("show")
    .description("print the effective configuration as a config file (defaults filled in, secrets masked)")
    .addOption(configOption())
    .option("--json", "print JSON")
    .action(lazyAction(io, () => import("./config/show-action.js")));

  config
    .command("check")
    .description("validate the config file; exit 0 when it is valid")
    .addOption(configOption())
    .option("--json", "print JSON")
    .action(lazyAction(io, () => import("./config/check-action.js")));

  config
    .command("set")
    .description("set one key (dotted path, e.g. homeChannels.telegram.chatId) in the config file, keeping its comments")
    .argument("<key>", "dotted key path")
    .argument("<value>", "the value (YAML: 42, true, a string, [a, b]; negative numbers such as -100123 work as they are)")
    .addOption(configOption())
    .allowUnknownOption(true)
    .action(lazyAction(io, () => import("./config/set-action.js")));

  return config;
}
