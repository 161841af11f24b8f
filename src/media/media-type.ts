/**
 * The type of an attachment by its bytes, not only by what the sender declared: file-type's
 * detection (imported lazily), else UTF-8 text, else `application/octet-stream`. Programs are
 * refused, and so is a declared photo, audio or video whose bytes are not one.
 *
 * @module
 */
import type { AttachmentKind } from "../store/index.js";

/** How many leading bytes {@link detectMediaType} looks at (file-type needs at most a few KB; text is judged on this much). */
export const MEDIA_HEAD_BYTES = 64 * 1024;

/** Image types the models take as image parts; other images are kind `image` but reach the model as a placeholder. */
export const MODEL_IMAGE_TYPES: readonly string[] = Object.freeze(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** Types that are programs (executables, libraries, installers, bytecode): never kept. */
const PROGRAM_TYPES: ReadonlySet<string> = new Set([
  "application/x-elf",
  "application/x-msdownload",
  "application/x-mach-binary",
  "application/wasm",
  "application/java-vm",
  "application/x-deb",
  "application/x-rpm",
  "application/vnd.android.package-archive",
  "application/x-shockwave-flash",
  "application/x-ms-shortcut",
]);

/** Containers that hold audio as often as video: a declared audio in one of them is audio (of this type). */
const AUDIO_CONTAINERS: ReadonlyMap<string, string> = new Map([
  ["video/webm", "audio/webm"],
  ["video/mp4", "audio/mp4"],
  ["video/ogg", "audio/ogg"],
  ["video/3gpp", "audio/3gpp"],
  ["video/x-matroska", "audio/x-matroska"],
  ["video/quicktime", "video/quicktime"],
]);

/** What {@link detectMediaType} found. */
export type MediaTypeVerdict =
  | { ok: true; mimeType: string; kind: AttachmentKind }
  /** Refused: `reason` completes "Your photo was not kept: …" (no final period). */
  | { ok: false; mimeType: string; reason: string };

/** What the sender declared (the adapter's `InboundMedia.kind` and `mimeType`). */
export interface DeclaredMedia {
  kind: string;
  mimeType?: string | null;
}

/** `image/jpeg` from `Image/JPEG; charset=x`. */
export function essenceOf(mimeType: string | null | undefined): string | null {
  if (mimeType === null || mimeType === undefined) return null;
  const essence = mimeType.split(";")[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/u.test(essence) ? essence : null;
}

/** Whether an image type goes to the model as an image part (jpeg, png, gif, webp). */
export function isModelImageType(mimeType: string): boolean {
  return MODEL_IMAGE_TYPES.includes(essenceOf(mimeType) ?? "");
}

/** Whether these bytes are a program (ELF, PE/exe, Mach-O, wasm, Java class, packages). */
export function isProgramType(mimeType: string): boolean {
  return PROGRAM_TYPES.has(essenceOf(mimeType) ?? "");
}

/** The declared kind that constrains the bytes: `image`, `audio` (a voice note too) or `video`; `null` for anything else. */
function constrainedKind(declared: DeclaredMedia): "image" | "audio" | "video" | null {
  const kind = declared.kind.toLowerCase();
  if (kind === "image" || kind === "photo" || kind === "sticker") return "image";
  if (kind === "audio" || kind === "voice") return "audio";
  if (kind === "video") return "video";
  return null;
}

/** `image` for `image/png`, … (`null` for other families). */
function familyOf(mimeType: string): "image" | "audio" | "video" | null {
  const top = mimeType.split("/")[0];
  return top === "image" || top === "audio" || top === "video" ? top : null;
}

/** What a kind is called in a sentence ("not a photo"). */
function kindNoun(kind: "image" | "audio" | "video"): string {
  return kind === "image" ? "an image" : kind === "audio" ? "audio" : "a video";
}

/**
 * Whether `head` (leading bytes) is UTF-8 text without NUL. `complete`: `head` is the whole
 * file (otherwise a multi-byte sequence cut at its end is allowed).
 */
export function looksLikeText(head: Uint8Array, complete: boolean): boolean {
  if (head.includes(0)) return false;
  let bytes = head;
  if (!complete) {
    // Drop a sequence cut by the end of the head (at most 3 bytes of a 4-byte sequence).
    let cut = 0;
    for (let i = head.length - 1; i >= 0 && i >= head.length - 3; i--) {
      const b = head[i]!;
      if ((b & 0xc0) === 0x80) continue;
      if (b >= 0xc0) cut = head.length - i;
      break;
    }
    bytes = head.subarray(0, head.length - cut);
  }
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Whether UTF-8 text is an SVG document. */
function isSvgText(head: Uint8Array): boolean {
  const text = new TextDecoder().decode(head.subarray(0, 4096)).trimStart().toLowerCase();
  return /^(?:\ufeff)?(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!doctype svg[^>]*>\s*)?<svg[\s>]/u.test(text);
}

/**
 * The type and kind of an attachment by its leading bytes:
 * - file-type's detection; a program is refused;
 * - else UTF-8 text without NUL: the declared `text/*` type or `text/plain` (an SVG is
 *   `image/svg+xml` of kind `file`: it can run script in a browser);
 * - else `application/octet-stream`.
 *
 * A declared image, audio or video whose bytes are not of that kind is refused. The kind is
 * the bytes' family (`image`/`audio`/`video`; a photo sent as a document is an image), a
 * declared audio in a webm/mp4/ogg container stays audio, and anything else is `file`.
 *
 * @param head The first bytes ({@link MEDIA_HEAD_BYTES} or the whole file when shorter).
 * @param size The whole file's size (text is judged on the head only).
 */
export async function detectMediaType(head: Uint8Array, size: number, declared: DeclaredMedia): Promise<MediaTypeVerdict> {
  const { fileTypeFromBuffer } = await import("file-type");
  const found = head.length === 0 ? undefined : await fileTypeFromBuffer(head);
  const wanted = constrainedKind(declared);
  const declaredType = essenceOf(declared.mimeType);
  let mimeType: string;
  if (found !== undefined && (found.mime === "application/xml" || found.mime === "text/xml") && isSvgText(head)) {
    return { ok: true, mimeType: "image/svg+xml", kind: "file" };
  }
  if (found !== undefined) {
    mimeType = essenceOf(found.mime) ?? found.mime;
    if (isProgramType(mimeType)) return { ok: false, mimeType, reason: `it is a program (${mimeType}), and programs are not accepted` };
  } else if (head.length > 0 && looksLikeText(head, head.length >= size)) {
    if (isSvgText(head)) return { ok: true, mimeType: "image/svg+xml", kind: "file" };
    mimeType = declaredType?.startsWith("text/") === true ? declaredType : "text/plain";
  } else {
    mimeType = "application/octet-stream";
  }
  const family = familyOf(mimeType);
  if (wanted !== null && family !== wanted) {
    if (wanted === "audio" && AUDIO_CONTAINERS.has(mimeType)) return { ok: true, mimeType: AUDIO_CONTAINERS.get(mimeType)!, kind: "audio" };
    if (wanted === "video" && mimeType === "image/gif") return { ok: true, mimeType, kind: "image" };
    return { ok: false, mimeType, reason: `it was sent as ${kindNoun(wanted)} but its bytes are not one (${mimeType})` };
  }
  return { ok: true, mimeType, kind: family ?? "file" };
}
