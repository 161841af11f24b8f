/**
 * `threadline memory clear [--user] [--for P:ID] [--yes]`: deletes a person's MEMORY (or, with
 * `--user`, USER) memory after asking on the terminal (without a terminal and without `--yes` it
 * refuses, exit 4).
 *
 * The action of the command defined in clear-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withExistingDatabase } from "../../cli-context.js";
import { canPrompt, confirm } from "../../confirm-prompt.js";
import { kindName, kindOf, memoryConfig, memoryDatabaseTarget, memoryOwnerOfOption, ownerText, type MemoryTargetOptions } from "./memory-target.js";

interface ClearOptions extends MemoryTargetOptions {
  yes?: boolean;
  json?: boolean;
}

/** Runs `clear`: the action of makeMemoryClearCommand (in clear-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ClearOptions): Promise<void> {
  const config = await memoryConfig(options, io.env);
  const kind = kindOf(options);
  await withExistingDatabase(memoryDatabaseTarget(options, config), io.env, async (db) => {
    const owner = await memoryOwnerOfOption(db, options.for, config);
    const what = `the ${kindName(kind)} memory of ${ownerText(owner)}`;
    const record = await db.getMemory(owner, kind);
    if (record === null) {
      if (options.json) writeJson(io, { owner, kind, cleared: false });
      else io.stdout.write(`There is no ${kindName(kind)} memory of ${ownerText(owner)}; nothing to clear.\n`);
      return;
    }
    if (!options.yes) {
      if (!canPrompt(io))
        throw new CliError("TL_ERR_CONFIRMATION_REQUIRED", `Refusing to clear ${what} without confirmation: stdin is not a terminal. Pass --yes to clear it.`);
      const n = record.entries.length;
      if (!(await confirm(io, `Clear ${what} (${n} ${n === 1 ? "entry" : "entries"})? [y/N]`))) {
        if (options.json) writeJson(io, { owner, kind, cleared: false });
        else io.stdout.write("Cancelled; nothing was cleared.\n");
        return;
      }
    }
    const cleared = (await db.clearMemory(owner, kind)) > 0;
    if (options.json) writeJson(io, { owner, kind, cleared });
    else io.stdout.write(cleared ? `Cleared ${what}.\n` : `There is no ${kindName(kind)} memory of ${ownerText(owner)}; nothing to clear.\n`);
  });
}
