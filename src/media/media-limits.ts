/**
 * The limits of inbound media (`media.*` in the serve config) and sizes as people read them.
 *
 * @module
 */

/** Default `media.maxBytes`: 20 MiB. */
export const DEFAULT_MEDIA_MAX_BYTES = 20 * 1024 * 1024;
/** Default `media.maxImagesInContext`: the newest 4 images of a request go to the model as images. */
export const DEFAULT_MAX_IMAGES_IN_CONTEXT = 4;
/** Default `media.downloadTimeoutSeconds`. */
export const DEFAULT_DOWNLOAD_TIMEOUT_SECONDS = 60;

/** The `media` settings of a gateway (`media.*` in the serve config), defaults resolved. */
export interface MediaSettings {
  /** The most bytes kept of one attachment; larger ones are refused (default 20 MiB). */
  maxBytes: number;
  /** How many of a request's newest images go to the model as images (0: never; default 4). */
  maxImagesInContext: number;
  /** How long one download may take, in seconds (default 60). */
  downloadTimeoutSeconds: number;
}

/** The defaults of every `media.*` key. */
export const DEFAULT_MEDIA_SETTINGS: Readonly<MediaSettings> = Object.freeze({
  maxBytes: DEFAULT_MEDIA_MAX_BYTES,
  maxImagesInContext: DEFAULT_MAX_IMAGES_IN_CONTEXT,
  downloadTimeoutSeconds: DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
});

/** Settings with the defaults filled in for what `partial` leaves out. */
export function mediaSettingsOf(partial: Partial<MediaSettings> = {}): MediaSettings {
  return {
    maxBytes: partial.maxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
    maxImagesInContext: partial.maxImagesInContext ?? DEFAULT_MAX_IMAGES_IN_CONTEXT,
    downloadTimeoutSeconds: partial.downloadTimeoutSeconds ?? DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
  };
}

/**
 * A size as a chat message says it: `512 bytes`, `200 KB`, `25.3 MB`, `1.2 GB` (powers of 1,024,
 * one decimal, none when it is whole).
 *
 * @example
 * humanSize(26_528_972); // "25.3 MB"
 * humanSize(20 * 1024 * 1024); // "20 MB"
 */
export function humanSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) {
    const n = Math.max(0, Math.round(Number.isFinite(bytes) ? bytes : 0));
    return `${n} ${n === 1 ? "byte" : "bytes"}`;
  }
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = value.toFixed(1).replace(/\.0$/u, "");
  return `${shown} ${units[unit]}`;
}

/** Thrown when an attachment is over the limit: by its declared or announced size, or while its bytes are counted. */
export class MediaTooLargeError extends Error {
  /** Its size when known (declared, or a data URL's length); `null` when reading stopped past the limit. */
  readonly size: number | null;
  /** The limit in bytes. */
  readonly limit: number;

  constructor(size: number | null, limit: number) {
    super(size === null ? `it is larger than the limit of ${humanSize(limit)}` : `it is ${humanSize(size)} and the limit is ${humanSize(limit)}`);
    this.name = "MediaTooLargeError";
    this.size = size;
    this.limit = limit;
  }
}

/** The largest `media.maxBytes` accepted: 2 GiB. */
export const MAX_MEDIA_MAX_BYTES = 2 * 1024 * 1024 * 1024;

const UNIT_BYTES: Readonly<Record<string, number>> = Object.freeze({
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
});

/**
 * A byte count from a number or a string such as `"20MB"`, `"20 MiB"`, `"512 KB"` (powers of
 * 1,024, as {@link humanSize} prints them); `null` when it is neither.
 *
 * @example
 * parseByteSize("20MB"); // 20971520
 */
export function parseByteSize(value: unknown): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : null;
  if (typeof value !== "string") return null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/iu.exec(value);
  if (match === null) return null;
  const unit = UNIT_BYTES[(match[2] || "b").toLowerCase()];
  if (unit === undefined) return null;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}
