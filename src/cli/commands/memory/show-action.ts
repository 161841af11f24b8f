/**
 * `threadline memory show [--user] [--for P:ID] [--json]`: a person's MEMORY (the agent's
 * notes) or USER memory (about them), entries separated by lines holding only `§`, with the
 * characters used of the limit.
 *
 * The action of the command defined in show-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { relativeTime, styles, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import {
  entriesText,
  printableLines,
  kindName,
  kindOf,
  limitOf,
  memoryJson,
  memoryConfig,
  memoryDatabaseTarget,
  memoryOwnerOfOption,
  ownerText,
  type MemoryTargetOptions,
} from "./memory-target.js";

interface ShowOptions extends MemoryTargetOptions {
  json?: boolean;
}

/** Runs `show`: the action of makeMemoryShowCommand (in show-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ShowOptions): Promise<void> {
  const config = await memoryConfig(options, io.env);
  const kind = kindOf(options);
  await withExistingDatabase(memoryDatabaseTarget(options, config), io.env, async (db) => {
    const owner = await memoryOwnerOfOption(db, options.for, config);
    const record = await db.getMemory(owner, kind);
    const limit = limitOf(kind);
    if (options.json) {
      writeJson(io, memoryJson(owner, kind, record));
      return;
    }
    const s = styles(useColor(io));
    if (record === null || record.entries.length === 0) {
      io.stdout.write(`No ${kindName(kind)} memory saved for ${ownerText(owner)} yet (limit ${limit.toLocaleString("en-US")} chars).\n`);
      return;
    }
    const n = record.entries.length;
    io.stdout.write(
      `${s.bold(`${kindName(kind)} memory of ${ownerText(owner)}`)} ${s.dim(
        `· ${record.chars.toLocaleString("en-US")}/${limit.toLocaleString("en-US")} chars · ${n} ${n === 1 ? "entry" : "entries"} · updated ${relativeTime(record.updatedAt / 1000, io.now())}`,
      )}\n${printableLines(entriesText(record.entries))}\n`,
    );
  });
}
