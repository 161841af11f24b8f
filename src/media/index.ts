/**
 * Inbound media: the limits (`media.*`), type checks by bytes, bounded downloads to temp
 * files, and the turn step that stores attachments and transcribes audio before a turn's
 * user messages are written. The gateway imports it; it imports only types of the gateway,
 * the agents and the store.
 *
 * @module
 */
export {
  DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_IMAGES_IN_CONTEXT,
  DEFAULT_MEDIA_MAX_BYTES,
  DEFAULT_MEDIA_SETTINGS,
  MAX_MEDIA_MAX_BYTES,
  MediaTooLargeError,
  humanSize,
  parseByteSize,
  mediaSettingsOf,
  type MediaSettings,
} from "./media-limits.js";
export {
  MEDIA_HEAD_BYTES,
  MODEL_IMAGE_TYPES,
  detectMediaType,
  essenceOf,
  isModelImageType,
  isProgramType,
  looksLikeText,
  type DeclaredMedia,
  type MediaTypeVerdict,
} from "./media-type.js";
export {
  InvalidDataUrlError,
  decodeDataUrl,
  isDataUrl,
  mediaTempDir,
  removeSpooled,
  spoolMedia,
  type DecodedDataUrl,
  type MediaBody,
  type SpoolOptions,
  type SpooledMedia,
} from "./media-download.js";
export {
  VOICE_NOT_ENABLED_NOTICE,
  ingestMedia,
  isAnswerable,
  mediaNoun,
  needsMediaIngest,
  refusalReason,
  refusalSentence,
  type MediaFetcher,
  type MediaIngestLog,
  type MediaIngestOptions,
  type MediaIngestResult,
  type MediaNotice,
} from "./media-ingest.js";
