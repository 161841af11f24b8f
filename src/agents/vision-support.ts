/**
 * Which provider models refuse images: a text-only model behind an OpenAI-compatible endpoint
 * rejects any request whose messages carry an `image_url` part. {@link isImagesUnsupportedError}
 * recognises those refusals; a {@link VisionSupport} remembers them for the life of the process
 * (per endpoint and model), so later turns of `provider.vision: auto` go without images at once
 * instead of being refused first. Also the `provider.vision` setting ({@link ProviderVisionSetting})
 * and the text an image part is replaced with ({@link imagePartPlaceholder}).
 *
 * @module
 */
import { imagePlaceholder } from "../context/internal.js";
import { RefusalMemo, type RefusalMemoOptions } from "./refusal-memo.js";

/**
 * `provider.vision`: `auto` (default: images are sent until the endpoint refuses them for a
 * model, then that model gets their placeholders), `on` (always sent; a refusal is an error),
 * `off` (never sent: each image goes as its placeholder).
 */
export type ProviderVisionSetting = "auto" | "on" | "off";

/** The values of {@link ProviderVisionSetting}, default first. */
export const PROVIDER_VISION_SETTINGS: readonly ProviderVisionSetting[] = Object.freeze(["auto", "on", "off"]);

/**
 * How OpenAI-compatible servers word "this model cannot take images":
 * - OpenAI (400): `Invalid content type. image_url is only supported by certain models.`;
 * - vLLM (400): `<model> is not a multimodal model`;
 * - Ollama (400): `this model does not support image input` (older: `… does not support images`);
 * - llama.cpp's server (500): `image input is not supported - hint: … provide the mmproj`, or
 *   `image input is not supported by this server`; older builds: `The server was not compiled for multimodal …`;
 * - LM Studio (400): `Model does not support images. Please use a model that does.`;
 * - others: `vision is not supported`, `images are not supported by this model`, `multimodal input is not enabled`.
 */
const IMAGES_UNSUPPORTED: readonly RegExp[] = [
  /\bimage_url is only supported by certain models\b/iu,
  /\bis not a multi-?modal model\b/iu,
  /\bdoes(?: not|n't) support (?:images?|image[ _-]?(?:input|url)s?|vision|multi-?modal(?: input)?)\b/iu,
  /\bnot compiled for multi-?modal\b/iu,
  /\b(?:images?|image[ _-]?(?:input|url|content)s?|vision|multi-?modal(?: input)?)\b[^.]{0,40}\b(?:(?:is|are) not (?:supported|enabled|available)|unsupported)\b/iu,
  /\bunsupported\b[^.]{0,20}\b(?:images?|image[ _-]?(?:input|url)s?|vision|multi-?modal)\b/iu,
];

/** Statuses such refusals come with (llama.cpp answers 500; nobody answers 401/404/429 for it). */
const REFUSAL_STATUSES = new Set([400, 415, 422, 500, 501]);

/**
 * Whether a provider's failed reply means "no images for this model".
 *
 * @example
 * isImagesUnsupportedError(400, "Invalid content type. image_url is only supported by certain models."); // true
 * isImagesUnsupportedError(400, "max_tokens is too large"); // false
 */
export function isImagesUnsupportedError(status: number | null, providerMessage: string | null): boolean {
  if (status === null || !REFUSAL_STATUSES.has(status) || providerMessage === null) return false;
  return IMAGES_UNSUPPORTED.some((pattern) => pattern.test(providerMessage));
}

/** Options of {@link VisionSupport}. */
export type VisionSupportOptions = RefusalMemoOptions;

/**
 * Remembers which endpoint and model refused images. Agents of one process share one (the
 * default {@link PROCESS_VISION_SUPPORT}, or the one given to them), so only the first image
 * request after a start pays for the refusal.
 *
 * @example
 * const vision = new VisionSupport({ onRefused: ({ model }) => console.warn(`${model}: no images`) });
 * new OpenAiCompatibleAgent({ baseUrl, model, visionSupport: vision });
 */
export class VisionSupport extends RefusalMemo {}

/** The memo agents use when none is given: one per process. */
export const PROCESS_VISION_SUPPORT = new VisionSupport();

/** The part of a `data:` URL that says its type and encoding, e.g. `data:image/png;base64,`. */
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/iu;

/**
 * The text an `image_url` part is replaced with when the model may not get it:
 * `[image: <type>, <size>]`, the type and size read from its `data:` URL (`[image]` for a remote URL
 * or an unreadable one: the URL itself is never repeated).
 *
 * @example
 * imagePartPlaceholder("data:image/png;base64,iVBORw0KGgo="); // "[image: image/png, 8 bytes]"
 */
export function imagePartPlaceholder(url: unknown): string {
  if (typeof url !== "string") return "[image]";
  const match = DATA_URL.exec(url);
  if (match === null) return "[image]";
  const type = match[1]!.trim() === "" ? "image" : match[1]!.trim().toLowerCase();
  const payload = url.slice(match[0].length);
  const base64 = /;base64$/iu.test(match[2] ?? "") || /;base64;/iu.test(match[2] ?? "");
  const size = base64 ? base64Size(payload) : decodedLength(payload);
  return imagePlaceholder({ mimeType: type, size });
}

function base64Size(payload: string): number {
  const clean = payload.replace(/\s+/gu, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function decodedLength(payload: string): number {
  try {
    return Buffer.byteLength(decodeURIComponent(payload));
  } catch {
    return payload.length;
  }
}
