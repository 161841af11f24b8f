/**
 * The backend-independent part of a usage update: which column each usage field lives
 * in, which fields are added and which are set, and the rule that no total may go below
 * zero. Backends only render the placeholders of their SQL dialect.
 *
 * @module
 */
import type { SessionUsage, UsageUpdate } from "./contract.js";
import { InvalidInputError } from "./errors.js";
import { checkUsage } from "./input-validation.js";

/** How numeric usage fields are applied: added to the totals, or set. */
export type UsageMode = "delta" | "absolute";

/** The kind of value a usage column holds (a backend picks its SQL type from it). */
export type UsageValueKind = "integer" | "real" | "text";

/** The column of every usage field, with the kind of value it holds. */
export const USAGE_COLUMNS: Readonly<Record<keyof SessionUsage, { column: string; kind: UsageValueKind }>> = {
  inputTokens: { column: "input_tokens", kind: "integer" },
  outputTokens: { column: "output_tokens", kind: "integer" },
  cacheReadTokens: { column: "cache_read_tokens", kind: "integer" },
  cacheWriteTokens: { column: "cache_write_tokens", kind: "integer" },
  reasoningTokens: { column: "reasoning_tokens", kind: "integer" },
  apiCalls: { column: "api_calls", kind: "integer" },
  estimatedCostUsd: { column: "estimated_cost_usd", kind: "real" },
  actualCostUsd: { column: "actual_cost_usd", kind: "real" },
  billingProvider: { column: "billing_provider", kind: "text" },
  billingMode: { column: "billing_mode", kind: "text" },
  costStatus: { column: "cost_status", kind: "text" },
};

/**
 * One column change of a usage update: `add` adds the value to the total, `addToNullable`
 * adds it to a total that may be `NULL` (counted as 0), `set` replaces the total.
 */
export interface UsageAssignment {
  /** The usage field (also a safe name for a named SQL parameter). */
  field: keyof SessionUsage;
  column: string;
  kind: UsageValueKind;
  op: "add" | "addToNullable" | "set";
  value: number | string | null;
}

/** A checked usage update: the column changes it makes, in a stable order. */
export interface UsagePlan {
  mode: UsageMode;
  assignments: UsageAssignment[];
}

/** Checks the `mode` option of `recordUsage` (default `"delta"`). */
export function checkUsageMode(mode: unknown): UsageMode {
  const resolved = mode ?? "delta";
  if (resolved !== "delta" && resolved !== "absolute") {
    throw new InvalidInputError(`mode must be "delta" or "absolute", not "${String(resolved)}".`, { field: "mode" });
  }
  return resolved;
}

/**
 * Validates a usage update (see `checkUsage`) and plans its column changes: in delta mode
 * numeric fields are added (`actualCostUsd` to a possibly unset total), in absolute mode
 * they are set; text fields are always set.
 */
export function planUsageUpdate(usage: UsageUpdate, mode: UsageMode): UsagePlan {
  const { numbers, texts } = checkUsage(usage, mode);
  const assignments: UsageAssignment[] = [];
  for (const [key, value] of Object.entries(numbers) as Array<[keyof SessionUsage, number | null]>) {
    const { column, kind } = USAGE_COLUMNS[key];
    const op = mode === "delta" ? (key === "actualCostUsd" ? "addToNullable" : "add") : "set";
    assignments.push({ field: key, column, kind, op, value });
  }
  for (const [key, value] of Object.entries(texts) as Array<[keyof SessionUsage, string | null]>) {
    const { column, kind } = USAGE_COLUMNS[key];
    assignments.push({ field: key, column, kind, op: "set", value });
  }
  return { mode, assignments };
}

/**
 * The `SET` items of a plan's `UPDATE sessions` statement; `placeholder` renders (and
 * binds) the parameter of one assignment in the backend's dialect.
 */
export function usageSetClauses(plan: UsagePlan, placeholder: (assignment: UsageAssignment) => string): string[] {
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch is exhaustive over the ops (tsc checks it).
  return plan.assignments.map((a) => {
    const p = placeholder(a);
    switch (a.op) {
      case "add":
        return `${a.column} = ${a.column} + ${p}`;
      case "addToNullable":
        return `${a.column} = coalesce(${a.column}, 0) + ${p}`;
      case "set":
        return `${a.column} = ${p}`;
    }
  });
}

/**
 * Throws {@link InvalidInputError} when a total went below zero: a negative delta may
 * correct a total, never take it below zero (the caller's transaction then rolls back).
 */
export function assertUsageNotNegative(usage: SessionUsage): SessionUsage {
  for (const [key, value] of Object.entries(usage)) {
    if (typeof value === "number" && value < 0) {
      throw new InvalidInputError(`This usage update would make ${key} negative (${value}); nothing was recorded.`, {
        field: key,
      });
    }
  }
  return usage;
}
