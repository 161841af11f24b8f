/**
 * Importers of other systems' session history into a SessionDB: hermes-agent's SessionDB
 * file (`state.db`). (Aurite execution directories are imported by `threadline/executions`.)
 *
 * @module
 */
export {
  importHermesState,
  type HermesImportOptions,
  type HermesImportReport,
  type HermesImportTarget,
  type HermesSessionAction,
  type HermesSessionOutcome,
} from "./hermes-import.js";
export { convertHermesSession, threadlineSessionId, type ConvertedSession, type SkippedMessage } from "./hermes-record.js";
export { HermesStateFile, type HermesMessageRow, type HermesSessionOutline, type HermesSessionRow } from "./hermes-state-file.js";
