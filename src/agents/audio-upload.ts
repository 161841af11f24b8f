/**
 * The upload of a speech-to-text request (`POST <baseUrl>/audio/transcriptions`, OpenAI's
 * multipart shape): the audio as the `file` field, named after its type (providers pick the
 * decoder by the file name's extension), the `model`, and `response_format=json`.
 *
 * @module
 */
import type { AudioInput } from "./agent.js";

/** File name extensions by audio type, as OpenAI's endpoint accepts them (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm). */
const EXTENSIONS: Readonly<Record<string, string>> = Object.freeze({
  "audio/ogg": "ogg",
  "audio/opus": "ogg",
  "application/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "audio/m4a": "m4a",
  "audio/aac": "m4a",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/vnd.wave": "wav",
  "audio/webm": "webm",
  "video/webm": "webm",
  "audio/flac": "flac",
  "audio/x-flac": "flac",
  "video/mp4": "mp4",
});

/**
 * The file name an audio of this type is uploaded as: `voice.<extension>` (`voice.ogg`,
 * `voice.mp3`, …; `voice.bin` for an unknown type).
 *
 * @example
 * audioFileName("audio/ogg; codecs=opus"); // "voice.ogg"
 */
export function audioFileName(mimeType: string): string {
  const type = mimeType.split(";")[0]!.trim().toLowerCase();
  return `voice.${EXTENSIONS[type] ?? "bin"}`;
}

/** The multipart form of one transcription request. */
export function transcriptionForm(audio: AudioInput, model: string): FormData {
  const form = new FormData();
  const name = audio.fileName !== undefined && audio.fileName.trim() !== "" ? audio.fileName.trim() : audioFileName(audio.mimeType);
  // A copy in a plain ArrayBuffer: the bytes may be a view of a shared or pooled buffer.
  const bytes = new Uint8Array(audio.bytes.byteLength);
  bytes.set(audio.bytes);
  form.append("file", new Blob([bytes], { type: audio.mimeType }), name);
  form.append("model", model);
  form.append("response_format", "json");
  return form;
}
