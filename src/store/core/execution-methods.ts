/**
 * Execution sessions of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import type {
  ExecutionChange,
  ExecutionChangeResult,
  ExecutionRecord,
  ExecutionSummary,
  FindExecutionsOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  Page,
} from "../contract.js";
import { checkExecutionChange, checkFindExecutions, checkListExecutionUnits, checkListExecutions } from "../execution-input.js";
import { checkId } from "../input-validation.js";
import * as executions from "./execution-steps.js";
import type { StoreDialect } from "./store-dialect.js";

export async function writeExecutions(d: StoreDialect<unknown>, change: ExecutionChange): Promise<ExecutionChangeResult | null> {
  const checked = checkExecutionChange(change);
  return d.write("writing execution sessions", function* () {
    yield* d.lockExecutions(executions.executionLockIds(checked));
    return yield* executions.writeExecutions(checked, d.greatest);
  });
}

export async function getExecution(d: StoreDialect<unknown>, id: string): Promise<ExecutionRecord | null> {
  checkId(id, "id");
  return d.read("reading an execution session", () => executions.getExecution(id));
}

export async function findExecutions(d: StoreDialect<unknown>, options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
  const checked = checkFindExecutions(options);
  return d.read("finding execution sessions", () => executions.findExecutions(checked));
}

export async function listExecutions(d: StoreDialect<unknown>, options: ListExecutionsOptions = {}): Promise<Page<ExecutionSummary> & { total: number }> {
  const checked = checkListExecutions(options);
  return d.read("listing execution sessions", () => executions.listExecutions(checked));
}

export async function listExecutionUnits(d: StoreDialect<unknown>, options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
  const checked = checkListExecutionUnits(options);
  return d.read("listing execution units", () => executions.listExecutionUnits(checked));
}
