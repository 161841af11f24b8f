/**
 * `threadline/executions`: execution sessions — the history of agent runs and workflow runs
 * (whose steps are agent runs) on any `SessionDB` backend: ids and partial-id resolution,
 * listing, exact cascading deletes, retention by units, and import of a directory of JSON
 * records.
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @module
 */

// The API.
export {
  Executions,
  type ExecutionScope,
  type ExecutionMetadata,
  type ExecutionSession,
  type ExecutionsOptions,
  type ListExecutionSessionsOptions,
  type SaveResultOptions,
  type AddMessageOptions,
  type DeleteExecutionReport,
} from "./executions.js";
export type { CleanupOptions, CleanupReport } from "./retention.js";
export type { ExecutionImportOptions, ExecutionImportReport, ExecutionImportSkip } from "./execution-import.js";

// Ids.
export { newExecutionId, stepSessionId, EXECUTION_ID_PREFIX } from "./execution-id.js";

// Results as given and as stored.
export type {
  AgentRunResult,
  WorkflowRunResult,
  WorkflowStepResult,
  WorkflowNodeResult,
  ExecutionMessage,
  StoredAgentResult,
  StoredWorkflowResult,
  StoredStepEntry,
} from "./execution-result.js";
export { toJsonSafe, type JsonValue, type JsonObject, type SerializedError } from "./safe-json.js";
