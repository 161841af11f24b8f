/**
 * The definition of `threadline sessions import` (arguments, options, help); its action (import-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { importMediaDirOption } from "./media-options.js";

/** The formats `--from` accepts. */
export const IMPORT_FORMATS = ["jsonl", "hermes", "aurite"] as const;

/**
 * Builds `sessions import`. With `--from jsonl` (the default) it prints `Imported N sessions,
 * skipped M already present.` (JSON: `{ "file": FILE, "imported": N, "skipped": M, "errors":
 * [{ "line": 4, "message": "…" }] }`); when lines were rejected it also names each on stderr
 * and exits 1. `--from hermes` and `--from aurite`: see {@link runHermesImport} and
 * {@link runAuriteImport}.
 */
export function makeImportCommand(io: CliIo): Command {
  return new Command("import")
    .description(
      'import sessions: JSON Lines as written by "export" ("-" for stdin), a hermes-agent state.db (--from hermes) or an Aurite execution directory (--from aurite); sessions already present are skipped',
    )
    .argument("<source>", 'input: a JSONL file or "-" for stdin; a hermes state.db; an Aurite directory')
    .addOption(new Option("--from <format>", "what the input is").choices(IMPORT_FORMATS).default("jsonl"))
    .addOption(new Option("--dry-run", "with --from hermes: read and check everything, print what would be imported, write nothing"))
    .addOption(new Option("--user <id>", "with --from aurite: the owner of every imported execution session"))
    .addOption(importMediaDirOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./import-action.js")));
}
