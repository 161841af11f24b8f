/**
 * The definition of `threadline insights` (arguments, options, help); its action (insights-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../cli-io.js";
import { dbOption, jsonOption, sourceOption } from "../command-options.js";
import { lazyAction } from "../action-loading.js";

/** Longest period `--days` accepts (100 years). */
export const MAX_DAYS = 36_500;

/**
 * Builds `insights`. JSON: `{ "location", "backend", "days", ...Insights }` (see docs/cli.md).
 *
 * @example
 * program.addCommand(makeInsightsCommand(processIo()));
 */
export function makeInsightsCommand(io: CliIo): Command {
  return new Command("insights")
    .description("token usage and cost by model and source, tool calls by tool, activity by weekday and hour, longest and costliest sessions")
    .addOption(new Option("--days <n>", `sessions started in the last n days (1–${MAX_DAYS})`).default("30"))
    .addOption(sourceOption())
    .addOption(new Option("--top <n>", "sessions in each ranked list (1–100)").default("5"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./insights-action.js")));
}
