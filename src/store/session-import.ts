/**
 * The backend-independent part of an import: reading lines, numbering them,
 * validating each record, and linking children whose parent comes later in the file.
 *
 * @module
 */
import type { ImportReport } from "./contract.js";
import { ConflictError, InvalidInputError, NotFoundError } from "./errors.js";
import { parseSessionRecord, type ValidRecord } from "./session-record.js";

/** What a backend did with one record. */
export interface ImportOutcome {
  status: "imported" | "skipped";
  /** The parent id the record names but that does not exist yet (linked when it arrives). */
  missingParent: string | null;
}

/**
 * Stores one record in one transaction. `waitingChildren` are sessions imported
 * earlier that name this record as their parent: the backend links them, and throws
 * if that would close a lineage cycle (then nothing of the record is written).
 */
export type ImportOne = (record: ValidRecord, waitingChildren: string[]) => Promise<ImportOutcome>;

/** Runs an import over `lines` with the backend's `importOne`. */
export async function runImport(lines: AsyncIterable<string> | Iterable<string>, importOne: ImportOne): Promise<ImportReport> {
  const report: ImportReport = { imported: 0, skipped: 0, errors: [] };
  const waiting = new Map<string, string[]>(); // parent id → children waiting for it
  let lineNo = 0;
  for await (const raw of lines as AsyncIterable<string>) {
    lineNo += 1;
    const line = typeof raw === "string" ? raw.trim() : "";
    if (line === "") continue;
    try {
      const record = parseSessionRecord(line);
      const children = waiting.get(record.session.id) ?? [];
      const outcome = await importOne(record, children);
      if (outcome.status === "skipped") {
        report.skipped += 1;
        continue;
      }
      report.imported += 1;
      waiting.delete(record.session.id);
      if (outcome.missingParent !== null) {
        const list = waiting.get(outcome.missingParent) ?? [];
        list.push(record.session.id);
        waiting.set(outcome.missingParent, list);
      }
    } catch (error) {
      // A bad record is reported and skipped; a storage failure stops the import.
      const recordProblem = error instanceof InvalidInputError || error instanceof ConflictError || error instanceof NotFoundError;
      if (!recordProblem) throw error;
      report.errors.push({ line: lineNo, message: error.message });
    }
  }
  return report;
}
