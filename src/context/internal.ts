/**
 * What the package's own folders share from `src/context/` beyond its public API (never an entry
 * point): the text placeholders of stored attachments (`./attachment-parts.ts`), which the agents,
 * the bridges and compression use so that no `attachment` part reaches a model, and the turning of
 * attachment parts into what a request carries (`./model-attachments.ts`), used by the gateway's
 * context assembly.
 *
 * @module
 */
export {
  MODEL_IMAGE_TYPES,
  NOT_STORED_NOTE,
  attachmentPlaceholder,
  audioPlaceholder,
  filePlaceholder,
  formatSize,
  imagePlaceholder,
  isAttachmentPart,
  isModelImage,
  videoPlaceholder,
  voiceNotePlaceholder,
  withAttachmentPlaceholders,
  type PlaceholderFacts,
  type PlaceholderOptions,
} from "./attachment-parts.js";
export {
  attachmentsForModel,
  countModelImages,
  type AttachmentReader,
  type AttachmentsForModelOptions,
  type ModelAttachments,
} from "./model-attachments.js";
