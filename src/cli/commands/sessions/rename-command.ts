/**
 * `threadline sessions rename <id> <title…>`: sets a session's title (the words joined with
 * spaces); an empty title clears it.
 *
 * @module
 */
import { Command } from "commander";
import { writeJson, type CliIo } from "../../cli-output.js";
import { noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";
import { dbOption, jsonOption } from "../../command-options.js";

interface RenameOptions {
  db?: string;
  json?: boolean;
}

/**
 * Builds `sessions rename`. A title another session holds is refused with the store's message
 * (exit 4). JSON: `{ "id": string, "title": string | null }` (the stored, sanitised title).
 */
export function makeRenameCommand(io: CliIo): Command {
  return new Command("rename")
    .description('set a session\'s title (several words are joined with spaces; "" clears it)')
    .argument("<session>", "session id, unique id prefix, or title")
    .argument("<title...>", "the new title")
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (ref: string, words: string[], options: RenameOptions) => {
      await withExistingDatabase(options.db, io.env, async (db) => {
        const id = await resolveSessionRef(db, ref, { note: noteOnStderr(io) });
        const title = await db.setTitle(id, words.join(" "));
        if (options.json) writeJson(io, { id, title });
        else io.stdout.write(title === null ? `Session '${id}' no longer has a title.\n` : `Session '${id}' is now titled "${title}".\n`);
      });
    });
}
