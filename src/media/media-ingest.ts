/**
 * The media step of a turn (before its user messages are stored): every attachment not yet
 * handled is read (a `data:` URL decoded, anything else fetched through its platform
 * adapter's `fetchMedia`), held to the size limit, typed by its bytes, stored by its
 * SHA-256, and an audio transcribed when the agent can. What was not kept is marked with the
 * sentence the chat is told; the message's text still goes through.
 *
 * @module
 */
import type { Agent } from "../agents/index.js";
import type { FetchedMedia, InboundMedia, InboundMessage, MediaFetchRequest } from "../gateway/index.js";
import type { AttachmentRef, MediaStore } from "../store/index.js";
import { decodeDataUrl, isDataUrl, removeSpooled, spoolMedia, type MediaBody, type SpooledMedia } from "./media-download.js";
import { MediaTooLargeError, type MediaSettings } from "./media-limits.js";
import { detectMediaType } from "./media-type.js";
import { readFile } from "node:fs/promises";

/** The sentence a chat gets when a voice note arrives and the agent cannot transcribe. */
export const VOICE_NOT_ENABLED_NOTICE =
  "Voice notes are not enabled here, so I cannot listen to yours. (The owner can enable them with provider.transcriptionModel, e.g. whisper-1.)";

/** An adapter's `fetchMedia`, bound to it. */
export type MediaFetcher = (media: InboundMedia, request: MediaFetchRequest) => Promise<FetchedMedia>;

/** Where the ingest writes warnings (the gateway's logger). Never given a URL. */
export interface MediaIngestLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** What {@link ingestMedia} needs. */
export interface MediaIngestOptions {
  /** Where blobs go (a `SessionDB`). */
  store: Pick<MediaStore, "putMedia">;
  /** The `fetchMedia` of a platform's adapter, or `null` when it has none (its attachments stay text only). */
  fetcherFor(platform: string): MediaFetcher | null;
  /** The agent that transcribes audio, asked for only when an audio was stored; `null` or one without `transcribe`: voice is not enabled. */
  transcriber(): Promise<Pick<Agent, "transcribe"> | null>;
  settings: MediaSettings;
  /** Stops every download and transcription (the turn stopped). */
  signal?: AbortSignal;
  log?: MediaIngestLog;
  /** Where temp files go (default: this process's folder under `os.tmpdir()`). */
  tempDir?: string;
}

/** A notice for the chat of one message (at most one per message). */
export interface MediaNotice {
  message: InboundMessage;
  text: string;
}

/** What {@link ingestMedia} did. */
export interface MediaIngestResult {
  /** The messages, in order, with `stored`, `refused` and `transcript` set on their media (copies; the input is left alone). */
  messages: InboundMessage[];
  /** One per message that has something to be told, in message order. */
  notices: MediaNotice[];
  /** Whether anything is left for the model: some text, a kept or text-only attachment, a transcript. */
  answerable: boolean;
}

/** Whether a message has attachments the ingest has not handled (neither `stored` nor `refused`). */
export function needsMediaIngest(message: InboundMessage): boolean {
  return (message.media ?? []).some((m) => !m.stored && !m.refused);
}

/** What an attachment is called in a sentence to its sender ("Your photo …"). */
export function mediaNoun(media: Pick<InboundMedia, "kind" | "voice" | "fileName">): string {
  const kind = media.kind.toLowerCase();
  if (kind === "audio" || kind === "voice") return media.voice === true || kind === "voice" ? "voice note" : "audio file";
  if (kind === "image" || kind === "photo") return "photo";
  if (kind === "sticker") return "sticker";
  if (kind === "video") return "video";
  return media.fileName ? `file "${media.fileName}"` : "file";
}

/** The sentence of a refusal: `Your photo was not kept: it is 25.3 MB and the limit is 20 MB.` */
export function refusalSentence(media: Pick<InboundMedia, "kind" | "voice" | "fileName">, reason: string): string {
  return `Your ${mediaNoun(media)} was not kept: ${reason}.`;
}

/** The short reason of a refusal sentence (what the stored `[image not kept: …]` note says). */
export function refusalReason(sentence: string): string {
  const match = /^Your .+? was not kept: (.*?)\.?$/su.exec(sentence);
  return match === null ? sentence.replace(/\.$/u, "") : match[1]!;
}

/** Whether a message has something for the model once its media were handled. */
export function isAnswerable(message: InboundMessage): boolean {
  if (message.text.trim() !== "") return true;
  return (message.media ?? []).some((m) => {
    if (m.stored) return m.stored.kind !== "audio" || (m.transcript ?? "").trim() !== "";
    return !m.refused;
  });
}

/** Why a download ended without bytes, as the end of "Your photo was not kept: …". */
function failureReason(error: unknown, settings: MediaSettings, signal: AbortSignal): string {
  if (error instanceof MediaTooLargeError) return error.message;
  if (error instanceof Error && error.name === "MediaUnavailableError") return error.message.replace(/\.$/u, "");
  if (error instanceof Error && error.name === "InvalidDataUrlError") return error.message;
  if (signal.aborted && (signal.reason as Error | undefined)?.name === "TimeoutError") {
    return `the download took longer than ${settings.downloadTimeoutSeconds} seconds`;
  }
  if (signal.aborted) return "the download was stopped";
  return "the download failed";
}

/** The bytes of a data URL as a body. */
async function* bodyOf(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** Cancels a body that will not be read. */
async function discard(body: MediaBody): Promise<void> {
  try {
    if (Symbol.asyncIterator in body) await (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]().return?.();
    else await (body as ReadableStream<Uint8Array>).cancel();
  } catch {
    // Nothing more to do with a body nobody reads.
  }
}

/** What became of one attachment. */
interface ItemOutcome {
  media: InboundMedia;
  /** An audio was stored and the agent cannot transcribe. */
  voiceOff?: boolean;
  /** A sentence for the chat besides a refusal (a transcription that failed). */
  note?: string;
}

/** The ingest of one turn's messages (one call of {@link ingestMedia}). */
class TurnIngest {
  readonly #options: MediaIngestOptions;
  #transcriber: Promise<Pick<Agent, "transcribe"> | null> | null = null;

  constructor(options: MediaIngestOptions) {
    this.#options = options;
  }

  /** One message: its media handled in order, and its notice. */
  async message(message: InboundMessage): Promise<{ message: InboundMessage; notice: string | null }> {
    const sentences: string[] = [];
    let refusedAny = false;
    let voiceOff = false;
    const media: InboundMedia[] = [];
    for (const item of message.media ?? []) {
      if (item.stored || item.refused) {
        media.push(item);
        continue;
      }
      const done = await this.#one(message, item);
      media.push(done.media);
      if (done.media.refused) {
        refusedAny = true;
        sentences.push(done.media.refused);
      }
      if (done.voiceOff) voiceOff = true;
      if (done.note !== undefined) sentences.push(done.note);
    }
    if (voiceOff) sentences.push(VOICE_NOT_ENABLED_NOTICE);
    if (refusedAny && message.text.trim() !== "") sentences.push("The text of your message went through.");
    return { message: { ...message, media }, notice: sentences.length === 0 ? null : sentences.join(" ") };
  }

  async #one(message: InboundMessage, item: InboundMedia): Promise<ItemOutcome> {
    const { settings, log } = this.#options;
    const refuse = (reason: string): { media: InboundMedia } => ({ media: { ...item, stored: null, refused: refusalSentence(item, reason) } });
    const fetcher = isDataUrl(item.url) ? null : this.#options.fetcherFor(message.source.platform);
    // No way to read it: noted as text only.
    if (!isDataUrl(item.url) && fetcher === null) return { media: item };
    if (typeof item.size === "number" && item.size > settings.maxBytes) return refuse(new MediaTooLargeError(item.size, settings.maxBytes).message);
    const timeout = AbortSignal.timeout(settings.downloadTimeoutSeconds * 1000);
    const signal = this.#options.signal === undefined ? timeout : AbortSignal.any([this.#options.signal, timeout]);
    let spooled: SpooledMedia | null = null;
    let announced: FetchedMedia | null = null;
    try {
      let body: MediaBody;
      if (isDataUrl(item.url)) {
        const decoded = decodeDataUrl(item.url, settings.maxBytes);
        body = bodyOf(decoded.bytes);
        announced = { body, mimeType: decoded.mimeType };
      } else {
        announced = await fetcher!(item, { source: message.source, maxBytes: settings.maxBytes, signal });
        body = announced.body;
        if (typeof announced.size === "number" && announced.size > settings.maxBytes) {
          await discard(body);
          return refuse(new MediaTooLargeError(announced.size, settings.maxBytes).message);
        }
      }
      spooled = await spoolMedia(body, { maxBytes: settings.maxBytes, signal, ...(this.#options.tempDir === undefined ? {} : { dir: this.#options.tempDir }) });
    } catch (error) {
      const reason = failureReason(error, settings, signal);
      if (reason === "the download failed") log?.warn({ err: error, platform: message.source.platform, kind: item.kind }, "downloading an attachment failed");
      return refuse(reason);
    }
    try {
      const verdict = await detectMediaType(spooled.head, spooled.size, { kind: item.kind, mimeType: item.mimeType ?? announced?.mimeType ?? null });
      if (!verdict.ok) return refuse(verdict.reason);
      try {
        await this.#options.store.putMedia({ file: spooled.file }, { mimeType: verdict.mimeType, sha256: spooled.sha256 });
      } catch (error) {
        log?.warn({ err: error, platform: message.source.platform, kind: item.kind }, "storing an attachment failed");
        return refuse("it could not be stored");
      }
      const ref: AttachmentRef = {
        sha256: spooled.sha256,
        kind: verdict.kind,
        mimeType: verdict.mimeType,
        size: spooled.size,
        fileName: item.fileName ?? announced?.fileName ?? null,
        caption: item.caption ?? null,
        ...(item.voice === true ? { voice: true } : {}),
        meta: item.meta ?? null,
      };
      if (ref.kind !== "audio") return { media: { ...item, stored: ref, refused: null } };
      return await this.#transcribed(message, item, ref, spooled);
    } finally {
      await removeSpooled(spooled);
    }
  }

  /** A stored audio, transcribed when the agent can. */
  async #transcribed(message: InboundMessage, item: InboundMedia, ref: AttachmentRef, spooled: SpooledMedia): Promise<ItemOutcome> {
    const failed = `I could not transcribe your ${mediaNoun(item)}; it is kept with your message.`;
    let agent: Pick<Agent, "transcribe"> | null;
    try {
      this.#transcriber ??= this.#options.transcriber();
      agent = await this.#transcriber;
    } catch (error) {
      this.#options.log?.warn({ err: error, platform: message.source.platform }, "making the agent that transcribes failed");
      return { media: { ...item, stored: ref, refused: null }, note: failed };
    }
    if (agent?.transcribe === undefined) return { media: { ...item, stored: ref, refused: null }, voiceOff: true };
    try {
      const bytes = new Uint8Array(await readFile(spooled.file));
      const fileName = ref.fileName ?? undefined;
      const text = (
        await agent.transcribe(
          { bytes, mimeType: ref.mimeType, ...(fileName === undefined ? {} : { fileName }) },
          this.#options.signal === undefined ? {} : { signal: this.#options.signal },
        )
      ).trim();
      const stored: AttachmentRef = { ...ref, meta: { ...(ref.meta ?? {}), transcribed: true } };
      const outcome: ItemOutcome = { media: { ...item, stored, refused: null, transcript: text } };
      if (text === "") outcome.note = `I could not make out any words in your ${mediaNoun(item)}; it is kept with your message.`;
      return outcome;
    } catch (error) {
      this.#options.log?.warn({ err: error, platform: message.source.platform }, "transcribing an audio failed");
      return { media: { ...item, stored: ref, refused: null }, note: failed };
    }
  }
}

/**
 * Handles the media of a turn's messages (in order; messages without media pass through):
 * see the module's description. Never throws for one attachment's failure: it is refused with
 * a sentence instead, and the message's text still goes through.
 *
 * @example
 * const { messages: ready, notices, answerable } = await ingestMedia(messages, {
 *   store: db, fetcherFor: (p) => adapters.get(p)?.fetchMedia?.bind(adapters.get(p)) ?? null,
 *   transcriber: async () => agent, settings: mediaSettingsOf(),
 * });
 */
export async function ingestMedia(messages: InboundMessage[], options: MediaIngestOptions): Promise<MediaIngestResult> {
  const ingest = new TurnIngest(options);
  const out: InboundMessage[] = [];
  const notices: MediaNotice[] = [];
  for (const message of messages) {
    if (!needsMediaIngest(message)) {
      out.push(message);
      continue;
    }
    const done = await ingest.message(message);
    out.push(done.message);
    if (done.notice !== null) notices.push({ message: done.message, text: done.notice });
  }
  return { messages: out, notices, answerable: out.some(isAnswerable) };
}
