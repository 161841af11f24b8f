/**
 * Execution sessions (`threadline/executions`): the history of agent runs and workflow runs
 * (whose steps are agent runs) on any `SessionDB` backend — ids and partial-id resolution,
 * listing, exact cascading deletes, retention by units, and import of a directory of JSON
 * records.
 *
 * @module
 */
export {
  Executions,
  type AddMessageOptions,
  type DeleteExecutionReport,
  type ExecutionMetadata,
  type ExecutionScope,
  type ExecutionSession,
  type ExecutionsOptions,
  type ListExecutionSessionsOptions,
  type SaveResultOptions,
} from "./executions.js";
export {
  EXECUTION_ID_PREFIX,
  defaultExecutionName,
  executionIdentity,
  isStepOf,
  newExecutionId,
  stepSessionId,
  type ExecutionIdentity,
} from "./execution-id.js";
export type {
  AgentRunResult,
  ExecutionMessage,
  StoredAgentResult,
  StoredStepEntry,
  StoredWorkflowResult,
  WorkflowNodeResult,
  WorkflowRunResult,
  WorkflowStepResult,
} from "./execution-result.js";
export type { CleanupOptions, CleanupReport } from "./retention.js";
export type { ExecutionImportOptions, ExecutionImportReport, ExecutionImportSkip } from "./execution-import.js";
export { toJsonSafe, type JsonObject, type JsonValue, type SerializedError } from "./safe-json.js";
