/**
 * `threadline sessions rename <id> <title…>`: sets a session's title (the words joined with
 * spaces); an empty title clears it.
 *
 * The action of the command defined in rename-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { writeJson, type CliIo } from "../../cli-output.js";
import { noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";

interface RenameOptions {
  db?: string;
  json?: boolean;
}

/** Runs `rename`: the action of makeRenameCommand (in rename-command.ts), loaded when the command runs. */
export async function run(io: CliIo, ref: string, words: string[], options: RenameOptions): Promise<void> {
  await withExistingDatabase(options.db, io.env, async (db) => {
    const id = await resolveSessionRef(db, ref, { note: noteOnStderr(io) });
    const title = await db.setTitle(id, words.join(" "));
    if (options.json) writeJson(io, { id, title });
    else io.stdout.write(title === null ? `Session '${id}' no longer has a title.\n` : `Session '${id}' is now titled "${title}".\n`);
  });
}
