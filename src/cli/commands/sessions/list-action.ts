/**
 * `threadline sessions list [--source S] [--limit 20] [--all]`: the newest sessions first.
 *
 * The action of the command defined in list-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { useColor, writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import { collectSessions } from "../../session-pages.js";
import { sessionTable } from "../../session-table.js";
import { withDisplayWidth } from "../../display-width.js";

interface ListOptions {
  db?: string;
  json?: boolean;
  source?: string[];
  limit: number;
  all?: boolean;
}

/** The table is measured inside withDisplayWidth: string-width loads only for text that needs it. */
export const loadsDisplayWidthItself = true;

/** Runs `list`: the action of makeListCommand (in list-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ListOptions): Promise<void> {
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
    io.stdout.write(`${await withDisplayWidth(() => sessionTable(items, { now: io.now(), color: useColor(io) }))}\n`);
    if (more > 0) {
      io.stdout.write(
        `\n... ${more} more session${more === 1 ? "" : "s"} (use --limit ${items.length + more} or --all to see ${more === 1 ? "it" : "them"})\n`,
      );
    }
  });
}
