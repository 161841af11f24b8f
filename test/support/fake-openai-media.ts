/**
 * The media side of the fake OpenAI-compatible server (see `./fake-openai-server.ts`):
 * - the refusals of real servers whose model cannot take images ({@link FAKE_IMAGE_REJECTIONS},
 *   used by the `rejectImages` option) and {@link hasImagePart}, which finds an image part in a
 *   chat request;
 * - the `POST /v1/audio/transcriptions` upload: {@link parseTranscriptionUpload} reads the
 *   multipart/form-data body with the platform's own parser (`Request.formData()`), as a real
 *   server would, into a {@link FakeTranscription}.
 *
 * @module
 */

/** How a server whose model cannot take images words its refusal (see {@link FAKE_IMAGE_REJECTIONS}). */
export type FakeImageRejection = "openai" | "vllm" | "ollama" | "llamacpp" | "lmstudio";

/** A refusal as a real server sends it: status, message, and whether `error` is a plain string. */
export interface FakeImageRefusal {
  status: number;
  message: (model: string) => string;
  /** The body is `{ "error": "<message>" }` (LM Studio) instead of OpenAI's `{ "error": { "message" } }`. */
  plainError?: boolean;
  /** OpenAI's `error.param`. */
  param?: string;
}

/**
 * The refusals of real servers whose model cannot take images, as reported in their trackers:
 * - OpenAI (400, `param: "messages.[0].content.[1].type"`): `Invalid content type. image_url is only supported by certain models.`;
 * - vLLM (400): `<model> is not a multimodal model`;
 * - Ollama (400): `this model does not support image input`;
 * - llama.cpp's server without `--mmproj` (500): `image input is not supported - hint: if this is unexpected, you may need to provide the mmproj`;
 * - LM Studio (400, `{"error":"…"}`): `Model does not support images. Please use a model that does.`
 */
export const FAKE_IMAGE_REJECTIONS: Record<FakeImageRejection, FakeImageRefusal> = {
  openai: { status: 400, message: () => "Invalid content type. image_url is only supported by certain models.", param: "messages.[0].content.[1].type" },
  vllm: { status: 400, message: (model) => `${model} is not a multimodal model` },
  ollama: { status: 400, message: () => "this model does not support image input" },
  llamacpp: { status: 500, message: () => "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj" },
  lmstudio: { status: 400, message: () => "Model does not support images. Please use a model that does.", plainError: true },
};

/** The JSON body of a refusal of images (see {@link FAKE_IMAGE_REJECTIONS}). */
export function imageRefusalBody(rejection: FakeImageRejection, model: string): unknown {
  const refusal = FAKE_IMAGE_REJECTIONS[rejection];
  const message = refusal.message(model);
  if (refusal.plainError === true) return { error: message };
  const type = refusal.status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: refusal.param ?? null, code: null } };
}

/** Whether any message of a chat request carries an `image_url` (or `input_image`) part. */
export function hasImagePart(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  return messages.some((message: unknown) => {
    const content = typeof message === "object" && message !== null ? (message as { content?: unknown }).content : undefined;
    return Array.isArray(content) && content.some((part: unknown) => isImagePart(part));
  });
}

function isImagePart(part: unknown): boolean {
  if (typeof part !== "object" || part === null) return false;
  const type = (part as { type?: unknown }).type;
  return type === "image_url" || type === "input_image";
}

/** One upload to `POST /v1/audio/transcriptions`, as the fake server parsed it. */
export interface FakeTranscription {
  /** The `model` field (empty string when missing). */
  model: string;
  /** The `file` field's file name (empty string when none was given). */
  fileName: string;
  /** The `file` field's type as the client declared it (empty string when none). */
  mimeType: string;
  /** The file's bytes. */
  bytes: Uint8Array;
  /** The `response_format` field, when given. */
  responseFormat?: string;
  /** The `language` field, when given. */
  language?: string;
}

/**
 * Reads a multipart/form-data upload with the platform's parser (a web `Request` built from the
 * received bytes). Returns `null` when the body is not multipart or has no `file` field.
 */
export async function parseTranscriptionUpload(body: Buffer, contentType: string | undefined): Promise<FakeTranscription | null> {
  if (contentType === undefined || !contentType.toLowerCase().startsWith("multipart/form-data")) return null;
  let form: FormData;
  try {
    form = await new Request("http://fake.invalid/upload", { method: "POST", headers: { "content-type": contentType }, body: new Uint8Array(body) }).formData();
  } catch {
    return null;
  }
  const file = form.get("file");
  if (file === null || typeof file === "string") return null;
  const upload: FakeTranscription = {
    model: stringField(form, "model") ?? "",
    fileName: file.name ?? "",
    mimeType: file.type ?? "",
    bytes: new Uint8Array(await file.arrayBuffer()),
  };
  const responseFormat = stringField(form, "response_format");
  if (responseFormat !== undefined) upload.responseFormat = responseFormat;
  const language = stringField(form, "language");
  if (language !== undefined) upload.language = language;
  return upload;
}

/** The default transcript: `Transcript of <n> bytes`. */
export function defaultTranscript(upload: FakeTranscription): string {
  return `Transcript of ${upload.bytes.byteLength} bytes`;
}

function stringField(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === "string" ? value : undefined;
}
