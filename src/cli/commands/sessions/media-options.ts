/**
 * The media options of `sessions export` and `sessions import`: `--media inline|skip` and the
 * sidecar folder `--media-dir <folder>` (what they do is in export-media.ts).
 *
 * @module
 */
import { Option } from "commander";

/** The values `--media` takes. */
export const MEDIA_CHOICES = ["inline", "skip"] as const;

/** `--media <mode>` of `sessions export` (no default here: an explicit value is checked against `--media-dir`). */
export function mediaOption(): Option {
  return new Option(
    "--media <mode>",
    'attachments (photos, voice notes, files): "inline" (default) writes their bytes into the records as base64, "skip" leaves them out',
  ).choices(MEDIA_CHOICES);
}

/** `--media-dir <folder>` of `sessions export`. */
export function exportMediaDirOption(): Option {
  return new Option("--media-dir <folder>", "write each attachment as <folder>/<sha256> (created when missing) instead of inline; the records name them");
}

/** `--media-dir <folder>` of `sessions import`. */
export function importMediaDirOption(): Option {
  return new Option("--media-dir <folder>", 'read attachments the records name from <folder>/<sha256> (the folder "export --media-dir" wrote)');
}
