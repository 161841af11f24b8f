/**
 * `threadline sessions list [--source S] [--limit 20] [--all]`: the newest sessions first.
 *
 * @module
 */
import { Command, Option } from "commander";
import { useColor, writeJson, type CliIo } from "../../cli-output.js";
import { parseCount, withExistingDatabase } from "../../cli-context.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { collectSessions } from "../../session-pages.js";
import { sessionTable } from "../../session-table.js";

interface ListOptions {
  db?: string;
  json?: boolean;
  source?: string[];
  limit: number;
  all?: boolean;
}

/**
 * Builds `sessions list`. JSON: `{ "sessions": SessionSummary[], "more": number }` where
 * `more` counts the sessions the limit left out.
 */
export function makeListCommand(io: CliIo): Command {
  return new Command("list")
    .description("list sessions, most recently active first")
    .addOption(sourceOption())
    .addOption(new Option("--limit <n>", "how many to show").default(20).argParser((v: string) => parseCount(v, "--limit")))
    .addOption(new Option("--all", "show every session (ignores --limit)"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (options: ListOptions) => {
      await withExistingDatabase(options.db, io.env, async (db) => {
        const sources = options.source !== undefined && options.source.length > 0 ? options.source : undefined;
        const { items, more } = await collectSessions(db, sources === undefined ? {} : { sources }, options.all ? Infinity : options.limit);
        if (options.json) {
          writeJson(io, { sessions: items, more });
          return;
        }
        if (items.length === 0) {
          io.stdout.write(sources === undefined ? "No sessions yet.\n" : `No sessions from ${sources.join(", ")}.\n`);
          return;
        }
        io.stdout.write(`${sessionTable(items, { now: io.now(), color: useColor(io) })}\n`);
        if (more > 0) {
          io.stdout.write(
            `\n... ${more} more session${more === 1 ? "" : "s"} (use --limit ${items.length + more} or --all to see ${more === 1 ? "it" : "them"})\n`,
          );
        }
      });
    });
}
