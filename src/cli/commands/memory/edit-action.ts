/**
 * `threadline memory edit [--user] [--for P:ID]`: opens `$VISUAL`/`$EDITOR` (else `vi`) on a
 * person's entries, one block per entry, blocks separated by a line holding only `§`, and
 * saves what was written when it fits the limit. Bad text (over the limit, a control
 * character) is refused with the store's message and nothing is written (exit 2); a memory
 * the agent changed while the editor was open is not overwritten (exit 4: edit again).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionDB, ConflictError, type SessionDB } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withExistingDatabase } from "../../cli-context.js";
import {
  entriesText,
  kindName,
  kindOf,
  limitOf,
  memoryJson,
  memoryConfig,
  memoryDatabaseTarget,
  memoryOwnerOfOption,
  ownerText,
  parseEntriesText,
  type MemoryTargetOptions,
} from "./memory-target.js";

interface EditOptions extends MemoryTargetOptions {
  json?: boolean;
}

/** The editor command: `$VISUAL`, else `$EDITOR`, else `vi`. */
function editorOf(env: NodeJS.ProcessEnv): string {
  for (const name of ["VISUAL", "EDITOR"]) {
    const value = env[name];
    if (value !== undefined && value.trim() !== "") return value.trim();
  }
  return "vi";
}

/** Runs the editor on `file` (through the shell, so `EDITOR="code --wait"` works) and resolves its exit code. */
function runEditor(editor: string, file: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${editor} '${file.replaceAll("'", "'\\''")}'`, { shell: true, stdio: "inherit", env });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? (signal === null ? 0 : 1)));
  });
}

/** Runs `edit`: the action of makeMemoryEditCommand (in edit-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: EditOptions): Promise<void> {
  const config = await memoryConfig(options, io.env);
  const kind = kindOf(options);
  const limit = limitOf(kind);
  await withExistingDatabase(memoryDatabaseTarget(options, config), io.env, async (readable, where) => {
    // The default database not made yet: editing creates it (the gateway will read it there).
    const db: SessionDB = where.notCreatedYet ? await openSessionDB(where.location) : readable;
    try {
      const owner = await memoryOwnerOfOption(db, options.for, config);
      const before = await db.getMemory(owner, kind);
      const dir = await mkdtemp(join(tmpdir(), "threadline-memory-"));
      const file = join(dir, `${kindName(kind)}.md`);
      let after: string[];
      try {
        await writeFile(file, before === null || before.entries.length === 0 ? "" : `${entriesText(before.entries)}\n`, { mode: 0o600 });
        io.stderr.write(
          `Editing the ${kindName(kind)} memory of ${ownerText(owner)} (limit ${limit.toLocaleString("en-US")} chars): one entry per block, blocks separated by a line holding only §.\n`,
        );
        const editor = editorOf(io.env);
        const code = await runEditor(editor, file, io.env).catch((error: unknown) => {
          throw new CliError("TL_ERR_USAGE", `Could not start the editor "${editor}" (${(error as Error).message}). Set EDITOR to your editor's command.`);
        });
        if (code !== 0) throw new CliError("TL_ERR_CONFLICT", `The editor exited with code ${code}; nothing was saved.`);
        after = parseEntriesText(await readFile(file, "utf8"));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const unchanged = before !== null && after.length === before.entries.length && after.every((e, i) => e === before.entries[i]);
      if (unchanged || (before === null && after.length === 0)) {
        if (options.json) writeJson(io, { ...memoryJson(owner, kind, before), changed: false });
        else io.stdout.write("No changes; nothing was saved.\n");
        return;
      }
      const written = await db.writeMemory({ owner, kind, entries: after, expectedVersion: before?.version ?? null, now: Math.round(io.now() * 1000) });
      if (written === null) {
        throw new ConflictError(
          `The ${kindName(kind)} memory of ${ownerText(owner)} changed while you were editing (the agent saved to it); nothing was saved. Run "threadline memory edit" again.`,
        );
      }
      if (options.json) {
        writeJson(io, { ...memoryJson(owner, kind, written), changed: true });
        return;
      }
      const n = written.entries.length;
      io.stdout.write(
        `Saved the ${kindName(kind)} memory of ${ownerText(owner)}: ${written.chars.toLocaleString("en-US")}/${limit.toLocaleString("en-US")} chars, ${n} ${n === 1 ? "entry" : "entries"}.\n`,
      );
    } finally {
      if (db !== readable) await db.close();
    }
  });
}
