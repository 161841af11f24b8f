/**
 * `threadline sessions delete <id> [--yes]`: deletes a session and all its messages, after
 * asking on the terminal.
 *
 * @module
 */
import { Command, Option } from "commander";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { canPrompt, confirm } from "../../confirm-prompt.js";

interface DeleteOptions {
  db?: string;
  json?: boolean;
  yes?: boolean;
}

/**
 * Builds `sessions delete`. Asks `Delete session '<id>' ("<title>") and all its messages? [y/N]` on
 * stderr unless `--yes`; without a terminal and without `--yes` it refuses (exit 4) instead of
 * waiting. JSON: `{ "id": string, "deleted": boolean }` (`false` when the answer was no).
 */
export function makeDeleteCommand(io: CliIo): Command {
  return new Command("delete")
    .description("delete a session and all its messages (asks first unless --yes)")
    .argument("<session...>", "session id, unique id prefix, or title (several words are joined with spaces, so quotes are optional)")
    .addOption(new Option("-y, --yes", "do not ask"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (words: string[], options: DeleteOptions) => {
      await withExistingDatabase(options.db, io.env, async (db) => {
        const id = await resolveSessionRef(db, words.join(" "), { note: noteOnStderr(io) });
        const title = (await db.getSession(id))?.title;
        const named = title ? `'${id}' ("${title}")` : `'${id}'`;
        if (!options.yes) {
          if (!canPrompt(io)) {
            throw new CliError(
              "TL_ERR_CONFIRMATION_REQUIRED",
              `Refusing to delete session ${named} without confirmation: stdin is not a terminal. Pass --yes to delete it.`,
            );
          }
          if (!(await confirm(io, `Delete session ${named} and all its messages? [y/N]`))) {
            if (options.json) writeJson(io, { id, deleted: false });
            else io.stdout.write("Cancelled; nothing was deleted.\n");
            return;
          }
        }
        const deleted = await db.deleteSession(id);
        if (!deleted) throw new CliError("TL_ERR_NOT_FOUND", `Session '${id}' no longer exists (deleted meanwhile?).`);
        if (options.json) writeJson(io, { id, deleted: true });
        else io.stdout.write(`Deleted session ${named}.\n`);
      });
    });
}
