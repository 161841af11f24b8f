/**
 * The media check of `threadline doctor`: every attachment reference resolves to a stored blob
 * (and, with `verify`, every blob still hashes to its id). Made through the store
 * (`SessionDB.checkMedia`), so it runs only when the other checks say the database can be
 * opened as it is.
 *
 * @module
 */
import type { DoctorReport, MediaDoctorCheck } from "./doctor-report.js";
import { openSessionDB } from "./open-session-db.js";

/** Sessions named in the missing-references problem. */
const NAMED_SESSIONS = 5;

/** The check before it ran: `ok` null with the reason. */
export function mediaNotChecked(skipped = "not checked"): MediaDoctorCheck {
  return { ok: null, skipped, verified: false, blobs: 0, bytes: 0, references: 0, missingCount: 0, missing: [], unreferenced: 0, corrupt: [], problems: [] };
}

/** Why the store cannot be opened as it is for the media check, or `null` when it can. */
function blocker(report: DoctorReport): string | null {
  if (report.schemaVersion !== report.supportedSchemaVersion) return "skipped: the schema is not this Threadline's (opening it would change it)";
  if (report.backend === "sqlite" && !report.integrity.ok) return "skipped: the file is damaged";
  if (report.backend === "postgres" && !report.connected) return "skipped: no connection";
  return null;
}

/**
 * Runs the media check on the database a report describes (`target` as `diagnoseDatabase` got
 * it), puts it in `report.media` and adds its problems to the report's.
 */
export async function checkReportMedia(report: DoctorReport, target: string | undefined, { verify = false }: { verify?: boolean } = {}): Promise<void> {
  const blocked = blocker(report);
  if (blocked !== null) {
    report.media = mediaNotChecked(blocked);
    return;
  }
  let found: Awaited<ReturnType<Awaited<ReturnType<typeof openSessionDB>>["checkMedia"]>>;
  try {
    const db = await openSessionDB(target);
    try {
      found = await db.checkMedia({ verify });
    } finally {
      await db.close();
    }
  } catch (error) {
    const problem = `The media check failed: ${error instanceof Error ? error.message : String(error)}.`;
    report.media = { ...mediaNotChecked("failed"), problems: [problem] };
    report.problems.push(problem);
    report.healthy = false;
    return;
  }
  const problems: string[] = [];
  if (found.missingCount > 0) {
    const sessions = [...new Set(found.missing.map((m) => m.sessionId))];
    const named = sessions.slice(0, NAMED_SESSIONS).join(", ");
    const more = sessions.length > NAMED_SESSIONS || found.missingCount > found.missing.length ? ", …" : "";
    problems.push(
      `${found.missingCount} attachment reference(s) do not resolve: their bytes are not stored (session(s) ${named}${more}). ` +
        'They were imported without media (an export made with "--media skip"). Import an export of those sessions made with media ' +
        '("threadline sessions import FILE", written by "sessions export" with the default --media inline, or with "--media-dir FOLDER" and the same folder): ' +
        "sessions already present are skipped, and their missing attachments are filled in.",
    );
  }
  if (found.corrupt.length > 0) {
    problems.push(
      `${found.corrupt.length} stored attachment(s) no longer hash to their id (damaged bytes), e.g. ${found.corrupt[0]}. ` +
        "Restore the database from a backup, or delete the sessions that refer to them and import those sessions again from an export.",
    );
  }
  report.media = {
    ok: problems.length === 0,
    skipped: null,
    verified: verify,
    blobs: found.blobs,
    bytes: found.bytes,
    references: found.references,
    missingCount: found.missingCount,
    missing: found.missing,
    unreferenced: found.unreferenced,
    corrupt: found.corrupt,
    problems,
  };
  if (problems.length > 0) {
    report.problems.push(...problems);
    report.healthy = false;
  }
}
