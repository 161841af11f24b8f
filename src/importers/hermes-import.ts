/**
 * Importing a hermes-agent `state.db` into a SessionDB: parents before children, one session
 * per transaction (through `importSessions`, so a session already present is skipped and an
 * interrupted import resumes by running it again), every change and omission reported.
 *
 * @module
 */
import { InvalidInputError, type SessionDB } from "../store/index.js";
import { parseSessionRecord } from "../store/session-record.js";
import { convertHermesSession, threadlineSessionId, type SkippedMessage } from "./hermes-record.js";
import { HermesStateFile, type HermesSessionOutline } from "./hermes-state-file.js";

/** The part of a {@link SessionDB} an import uses. */
export type HermesImportTarget = Pick<SessionDB, "getSession" | "importSessions" | "freeTitle">;

/** What happened to one hermes session. */
export type HermesSessionAction = "imported" | "present" | "failed" | "would-import";

/** One hermes session's outcome. */
export interface HermesSessionOutcome {
  /** Its id in the hermes file. */
  hermesId: string;
  /** Its id in Threadline (the same unless our id rules refused it). */
  id: string;
  /**
   * `imported`; `present` (a session with this id is already in the database: skipped unchanged);
   * `failed` (nothing of it written, see `error`); `would-import` (a dry run).
   */
  action: HermesSessionAction;
  /** The title it has in Threadline (after sanitising and de-duplicating); `null` for none or when not imported. */
  title: string | null;
  /** Its parent's Threadline id as the file names it, or `null`. */
  parentId: string | null;
  /** Messages imported (or that would be), and how many of them are rewound (hidden). `0` when not imported. */
  messages: number;
  rewound: number;
  /** Changes made on the way (a title renumbered, a parent link dropped, …), one sentence each. */
  notes: string[];
  /** Messages left out, with the reason. */
  skippedMessages: SkippedMessage[];
  /** Why it failed (`action: "failed"`). */
  error?: string;
}

/** What an import (or a dry run) did. */
export interface HermesImportReport {
  /** The hermes file. */
  file: string;
  dryRun: boolean;
  /** It stopped early (`shouldStop`); running it again imports the rest. */
  interrupted: boolean;
  /** The hermes file's `schema_version`, or `null`. */
  schemaVersion: number | null;
  /** What the file holds. */
  inFile: { sessions: number; messages: number; activeMessages: number };
  /** Sessions imported (would be, in a dry run), and their messages (all, and rewound). */
  imported: { sessions: number; messages: number; rewound: number };
  /** Sessions already in the database: skipped unchanged. */
  present: number;
  /** Sessions not imported because of an error (see their `error`). */
  failed: number;
  /** Messages left out of imported sessions (see each session's `skippedMessages`). */
  skippedMessages: number;
  /** Messages whose session is not in the file's `sessions` table: never imported. */
  orphanMessages: Array<{ hermesSessionId: string; messages: number }>;
  /** Every session, in import order (parents before children). */
  sessions: HermesSessionOutcome[];
}

/** Options of {@link importHermesState}. */
export interface HermesImportOptions {
  /** Read and check everything, write nothing (default `false`). */
  dryRun?: boolean;
  /** Called once the file is read, with how many sessions it holds. */
  onPlan?(plan: { sessions: number }): void;
  /** Called after each session. */
  onSession?(outcome: HermesSessionOutcome): void;
  /** Checked before each session: `true` stops the import there (`interrupted` in the report). */
  shouldStop?(): boolean;
}

/**
 * Imports a hermes-agent SessionDB file (opened read-only; never written) into `db`, or with
 * `dryRun` only says what would be imported (`db` may then be `null`: an empty database).
 * `source` is the file's path, or a {@link HermesStateFile} the caller opened (and closes).
 *
 * @throws {NotFoundError} when there is no file at `path`.
 * @throws {InvalidInputError} when it is not a hermes-agent SessionDB.
 * @example
 * const report = await importHermesState(db, `${homedir()}/.hermes/state.db`);
 * console.log(report.imported.sessions, report.present, report.failed);
 */
export async function importHermesState(
  db: HermesImportTarget | null,
  source: string | HermesStateFile,
  options: HermesImportOptions = {},
): Promise<HermesImportReport> {
  const dryRun = options.dryRun ?? false;
  if (db === null && !dryRun) throw new InvalidInputError("An import needs a database; only a dry run may go without one.");
  const file = typeof source === "string" ? await HermesStateFile.open(source) : source;
  const path = file.path;
  try {
    const outlines = file.outlines();
    const counts = file.messageCounts();
    const report: HermesImportReport = {
      file: path,
      dryRun,
      interrupted: false,
      schemaVersion: file.schemaVersion,
      inFile: { sessions: outlines.length, messages: 0, activeMessages: 0 },
      imported: { sessions: 0, messages: 0, rewound: 0 },
      present: 0,
      failed: 0,
      skippedMessages: 0,
      orphanMessages: file.orphanMessages().map((o) => ({ hermesSessionId: o.sessionId, messages: o.messages })),
      sessions: [],
    };
    for (const c of counts.values()) {
      report.inFile.messages += c.all;
      report.inFile.activeMessages += c.active;
    }
    for (const o of report.orphanMessages) {
      report.inFile.messages -= o.messages;
      report.inFile.activeMessages -= counts.get(o.hermesSessionId)?.active ?? 0;
    }
    options.onPlan?.({ sessions: outlines.length });

    const inFile = new Set(outlines.map((o) => o.id));
    const done = new Map<string, HermesSessionAction>(); // hermes id → what happened
    for (const outline of parentsFirst(outlines)) {
      if (options.shouldStop?.() === true) {
        report.interrupted = true;
        break;
      }
      const outcome = await importOne(db, file, outline, { dryRun, inFile, done });
      done.set(outline.id, outcome.action);
      report.sessions.push(outcome);
      if (outcome.action === "imported" || outcome.action === "would-import") {
        report.imported.sessions += 1;
        report.imported.messages += outcome.messages;
        report.imported.rewound += outcome.rewound;
        report.skippedMessages += outcome.skippedMessages.length;
      } else if (outcome.action === "present") report.present += 1;
      else report.failed += 1;
      options.onSession?.(outcome);
    }
    return report;
  } finally {
    if (typeof source === "string") file.close();
  }
}

/** The sessions in time order, each preceded by its ancestors in the file (a lineage cycle is cut where it is entered). */
function parentsFirst(outlines: HermesSessionOutline[]): HermesSessionOutline[] {
  const byId = new Map(outlines.map((o) => [o.id, o]));
  const placed = new Set<string>();
  const order: HermesSessionOutline[] = [];
  for (const outline of outlines) {
    const chain: HermesSessionOutline[] = [];
    const seen = new Set<string>();
    for (let at: HermesSessionOutline | undefined = outline; at !== undefined && !placed.has(at.id) && !seen.has(at.id); ) {
      seen.add(at.id);
      chain.push(at);
      at = at.parentId === null ? undefined : byId.get(at.parentId);
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      placed.add(chain[i]!.id);
      order.push(chain[i]!);
    }
  }
  return order;
}

interface ImportContext {
  dryRun: boolean;
  inFile: Set<string>;
  done: Map<string, HermesSessionAction>;
}

async function importOne(
  db: HermesImportTarget | null,
  file: HermesStateFile,
  outline: HermesSessionOutline,
  { dryRun, inFile, done }: ImportContext,
): Promise<HermesSessionOutcome> {
  const id = threadlineSessionId(outline.id);
  const parentId = outline.parentId === null || outline.parentId === "" ? null : threadlineSessionId(outline.parentId);
  const outcome: HermesSessionOutcome = {
    hermesId: outline.id,
    id,
    action: "failed",
    title: null,
    parentId,
    messages: 0,
    rewound: 0,
    notes: [],
    skippedMessages: [],
  };
  const existing = db === null ? null : await db.getSession(id);
  if (existing !== null) {
    outcome.action = "present";
    outcome.title = existing.title;
    return outcome;
  }
  const row = file.session(outline.id);
  if (row === undefined) {
    outcome.error = "the session was deleted from the hermes file while it was being imported";
    return outcome;
  }
  let converted: ReturnType<typeof convertHermesSession>;
  try {
    converted = convertHermesSession(row, file.messages(outline.id));
    // The same checks importSessions makes, so that a dry run finds what an import would refuse.
    parseSessionRecord(JSON.stringify(converted.record));
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    outcome.error = error.message;
    return outcome;
  }
  outcome.notes.push(...converted.notes);
  outcome.skippedMessages = converted.skippedMessages;
  if (outline.parentId !== null && parentId !== null) {
    const parentAction = done.get(outline.parentId);
    if (inFile.has(outline.parentId)) {
      if (parentAction === "failed") outcome.notes.push(`its parent ${parentId} was not imported (see its error); imported without a parent link`);
      else if (parentAction === undefined)
        outcome.notes.push(`its parent ${parentId} descends from it (a lineage cycle in the file); imported without a parent link`);
    } else if (db === null || (await db.getSession(parentId)) === null) {
      outcome.notes.push(`its parent ${parentId} is not in the file; imported without a parent link`);
    }
  }
  outcome.title = converted.record.session.title;
  outcome.messages = converted.messages;
  outcome.rewound = converted.rewound;
  if (dryRun || db === null) {
    outcome.action = "would-import";
    return outcome;
  }
  const first = await db.importSessions([JSON.stringify(converted.record)]);
  if (first.imported === 1) {
    outcome.action = "imported";
    return outcome;
  }
  if (first.skipped === 1) {
    // Another process imported it meanwhile.
    outcome.action = "present";
    outcome.messages = outcome.rewound = 0;
    return outcome;
  }
  const error = first.errors[0]?.message ?? "the database refused the session";
  const title = converted.record.session.title;
  if (title !== null) {
    // Titles are unique: one held by an unrelated session of this database takes its collision
    // form, "t (2)" (never "t #2", which would read as a continuation of that session).
    const next = await db.freeTitle(title);
    if (next !== title) {
      const retry = await db.importSessions([JSON.stringify({ ...converted.record, session: { ...converted.record.session, title: next } })]);
      if (retry.imported === 1) {
        outcome.action = "imported";
        outcome.title = next;
        outcome.notes.push(`the title "${title}" is taken in this database; imported as "${next}"`);
        return outcome;
      }
    }
  }
  outcome.error = error;
  outcome.messages = outcome.rewound = 0;
  outcome.skippedMessages = [];
  return outcome;
}
