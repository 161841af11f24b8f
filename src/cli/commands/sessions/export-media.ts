/**
 * The media of `sessions export` and `sessions import` (their options are in media-options.ts):
 * `--media inline|skip` and the sidecar folder `--media-dir <folder>` (each blob a file named by its SHA-256; the records
 * carry their media entries without `data`).
 *
 * @module
 */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { ThreadlineError, type ExportMediaMode, type ExportOptions, type MediaStore, type SessionRecord, type StoreMaintenance } from "../../../store/index.js";
import { CliError } from "../../cli-errors.js";
import type { MEDIA_CHOICES } from "./media-options.js";

/** The store's media mode for the export's options; throws a usage error for a contradiction. */
export function exportMediaMode(media: (typeof MEDIA_CHOICES)[number] | undefined, mediaDir: string | undefined): ExportMediaMode {
  if (mediaDir === undefined) return media ?? "inline";
  if (mediaDir.trim() === "") throw new CliError("TL_ERR_USAGE", "--media-dir needs a folder path.");
  if (media !== undefined) {
    throw new CliError(
      "TL_ERR_USAGE",
      `--media ${media} and --media-dir do not go together: --media-dir writes the attachments to the folder (the records name them); drop one of the two.`,
    );
  }
  return "refs";
}

/** Checks that `--media-dir` of an import names an existing folder. */
export async function checkImportMediaDir(folder: string): Promise<void> {
  if (folder.trim() === "") throw new CliError("TL_ERR_USAGE", "--media-dir needs a folder path.");
  const info = await stat(folder).catch((error: NodeJS.ErrnoException) => {
    throw error.code === "ENOENT"
      ? new CliError("TL_ERR_NOT_FOUND", `No such folder: ${folder} (--media-dir names the folder "sessions export --media-dir" wrote).`)
      : new CliError("TL_ERR_IO", `Cannot read ${folder}: ${error.message}`, { cause: error });
  });
  if (!info.isDirectory()) throw new CliError("TL_ERR_USAGE", `${folder} is not a folder; --media-dir names the folder "sessions export --media-dir" wrote.`);
}

/**
 * The export's lines with the media written to `folder`: records read with `media: "refs"`,
 * and for each entry the blob streamed to `<folder>/<sha256>` (through a temporary file renamed
 * into place; a file already there with the right size is kept, the name being the content's
 * hash). Memory holds one record without media data and one stored chunk of a blob.
 */
export async function* linesWithMediaDir(db: StoreMaintenance & MediaStore, options: Omit<ExportOptions, "media">, folder: string): AsyncIterable<Uint8Array> {
  await mkdir(folder, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new CliError("TL_ERR_IO", `Cannot create the media folder ${folder}: ${error.message}`, { cause: error });
  });
  for await (const record of db.exportSessions({ ...options, media: "refs" })) {
    for (const entry of record.media ?? []) await writeBlob(db, record, entry, folder);
    yield Buffer.from(`${JSON.stringify(record)}\n`);
  }
}

async function writeBlob(db: MediaStore, record: SessionRecord, entry: { sha256: string; size: number }, folder: string): Promise<void> {
  const path = join(folder, entry.sha256);
  const existing = await stat(path).catch(() => null);
  if (existing?.isFile() && existing.size === entry.size) return;
  const chunks = await db.streamMedia(entry.sha256);
  if (chunks === null) {
    throw new CliError(
      "TL_ERR_CONFLICT",
      `The attachment ${entry.sha256} of session ${record.session.id} was removed while the export read it (the session was deleted or pruned meanwhile); run the export again.`,
    );
  }
  const part = `${path}.part-${process.pid}`;
  const out = createWriteStream(part);
  try {
    for await (const chunk of chunks) {
      if (!out.write(chunk)) await once(out, "drain");
    }
    out.end();
    await finished(out);
    await rename(part, path);
  } catch (error) {
    out.destroy();
    await rm(part, { force: true });
    // A store error (busy, closed) stays what it is; a file-system one says which file.
    if (error instanceof ThreadlineError) throw error;
    throw new CliError("TL_ERR_IO", `Cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
}
