/**
 * The storage core as the other folders of this package (gateway, executions, CLI,
 * server, …) see it: the `SessionDB` contract, its errors, `openSessionDB` and the small
 * helpers around them. No backend is loaded by importing this module.
 *
 * Not a package entry point: the public part of the core is the explicit list in
 * `src/index.ts` (`threadline`). Helpers only this package uses (`newSessionId`) may be
 * exported here.
 *
 * @module
 */
export * from "./contract.js";
export * from "./errors.js";
export { openSessionDB, type OpenSessionDBOptions } from "./open-session-db.js";
export { diagnoseDatabase, repairDatabase, type DiagnoseOptions } from "./database-doctor.js";
export type { DoctorReport, MediaDoctorCheck, PostgresDoctorReport, RepairReport, SqliteDoctorReport, UnreadableRange } from "./doctor-report.js";
export { backupDatabase } from "./database-backup.js";
export type { BackupOptions, BackupReport } from "./backup-report.js";
export {
  copyDatabase,
  databaseContents,
  type DatabaseCopyCounts,
  type DatabaseCopyOptions,
  type DatabaseCopyReport,
} from "./database-copy.js";
export { defaultDatabasePath, threadlineHome } from "./data-home.js";
export { sanitizeTitle, parseLineageTitle, MAX_TITLE_CODE_POINTS, type LineageTitle } from "./titles.js";
export { setTitleAvoidingCollision, type TitleRelation } from "./title-setting.js";
// parseSessionRecord (zod) is not here: its door is ./session-record.js, so this module loads no zod.
export { RECORD_FORMAT, RECORD_VERSION } from "./record-format.js";
export { checkId, normalizeMessage } from "./input-validation.js";
export { openReadOnlySqliteFile, type ReadOnlySqliteFile, type SqlValue } from "./read-only-sqlite-file.js";
export { writeJsonl, writeLines, readJsonlLines, EXPORT_STREAM_BUFFER_BYTES } from "./jsonl.js";
export { newSessionId } from "./session-id.js";
export { toConversationMessage } from "./conversation.js";
export {
  HANDOFF_MESSAGE_PREFIX,
  SUMMARY_MESSAGE_PREFIX,
  summaryMessageText,
  syntheticMessageBody,
  syntheticMessageKind,
  type SyntheticMessageKind,
} from "./message-origin.js";
export { StoreCore } from "./core/store-core.js";
export { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, PAIRING_LIMITS, PAIRING_PLATFORMS, generatePairingCode, normalizePairingCode } from "./pairing-code.js";
