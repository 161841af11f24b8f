/**
 * `threadline sessions delete <id> [--yes]`: deletes a session and all its messages, after
 * asking on the terminal.
 *
 * The action of the command defined in delete-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";
import { canPrompt, confirm } from "../../confirm-prompt.js";

interface DeleteOptions {
  db?: string;
  json?: boolean;
  yes?: boolean;
}

/** Runs `delete`: the action of makeDeleteCommand (in delete-command.ts), loaded when the command runs. */
export async function run(io: CliIo, words: string[], options: DeleteOptions): Promise<void> {
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
}
