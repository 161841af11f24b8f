/**
 * The sessions part of `db copy` (database-copy.ts): the source's export streamed into the
 * target's import, over several lanes at once when the target is a server (each lane one
 * `importSessions` call, so one transaction per session as the import writes them, several in
 * flight). Lineage stays whole: a session goes to the lane its parent is still in flight in (a
 * lane imports in order), or to the lane a child that arrived before it waits in (the import
 * links them when the parent comes). Each blob a session names that the target does not hold yet
 * is spooled to its lane's folder a stored chunk at a time, and removed once the session is in.
 *
 * Memory stays bounded: each lane holds at most {@link LANE_DEPTH} sessions waiting, the
 * bookkeeping holds only the sessions in flight and the parents children wait for.
 *
 * @module
 */
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { ImportProblem, SessionDB, SessionRecord } from "./contract.js";

/** Running counts of the sessions part. */
export interface SessionCounts {
  sessions: number;
  /** Messages of the copied sessions (rewound ones included). */
  messages: number;
  /** Distinct attachment blobs stored in the target. */
  mediaBlobs: number;
  /** Their bytes. */
  mediaBytes: number;
}

/** Sessions a lane holds ready beyond the one its import is writing. */
const LANE_DEPTH = 2;

/** One session on its way: its line, and what to do once the import is past it. */
interface Item {
  /** 1-based position in the source's export. */
  position: number;
  record: SessionRecord;
  line: string;
  /** Spooled blob files, removed once the session is in. */
  files: string[];
  /** Resolves once the import is past it (written or refused). */
  done: Promise<void>;
  finish: () => void;
}

/** A lane: a bounded queue of items feeding one `importSessions` call. */
class Lane {
  readonly items: Item[] = [];
  #closed = false;
  #wake: (() => void) | null = null;
  #space: (() => void) | null = null;
  /** Positions of the sessions of this lane the target refused, in lane order. */
  readonly refused: number[] = [];

  constructor(readonly spool: string) {}

  async push(item: Item): Promise<void> {
    while (this.items.length >= LANE_DEPTH) await new Promise<void>((r) => (this.#space = r));
    this.items.push(item);
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** The lines of the lane; `after` runs for each item once the import asks for the next line (it is past this one). */
  async *lines(after: (item: Item, lane: Lane) => Promise<void>): AsyncIterable<string> {
    for (;;) {
      while (this.items.length === 0 && !this.#closed) await new Promise<void>((r) => (this.#wake = r));
      this.#wake = null;
      const item = this.items[0];
      if (item === undefined) return;
      yield item.line;
      this.items.shift();
      this.#space?.();
      this.#space = null;
      await after(item, this);
    }
  }
}

/**
 * Copies every session (rewound messages included) from `from` into the empty `to` over `lanes`
 * lanes, adding to `counts`; returns the sessions the target refused, by export position.
 */
export async function copySessions(
  from: SessionDB,
  to: SessionDB,
  spool: string,
  lanes: number,
  counts: SessionCounts,
  onSession?: () => void,
): Promise<ImportProblem[]> {
  const all: Lane[] = [];
  for (let i = 0; i < lanes; i++) {
    const dir = join(spool, String(i));
    await mkdir(dir, { mode: 0o700 });
    all.push(new Lane(dir));
  }
  /** Sessions dispatched and not yet past their import: id → lane and item. */
  const inFlight = new Map<string, { lane: Lane; item: Item }>();
  /** Parents not yet copied that a child waits for: parent id → the child's lane. */
  const awaited = new Map<string, Lane>();
  /** Blobs spooled and not yet stored. */
  const spooling = new Set<string>();

  const after = async (item: Item, lane: Lane): Promise<void> => {
    const { record } = item;
    if ((await to.getSession(record.session.id)) !== null) {
      counts.sessions += 1;
      counts.messages += record.messages.length;
      for (const entry of record.media ?? []) {
        counts.mediaBlobs += 1;
        counts.mediaBytes += entry.size;
      }
    } else lane.refused.push(item.position);
    for (const entry of record.media ?? []) spooling.delete(entry.sha256);
    for (const file of item.files) await rm(file, { force: true });
    inFlight.delete(record.session.id);
    item.finish();
    onSession?.();
  };
  const imports = all.map((lane) => to.importSessions(lane.lines(after), { mediaDir: lane.spool }));
  // A failed import must not leave the dispatcher waiting on a lane nobody reads.
  const failed = Promise.race(imports.map((p) => p.then(() => new Promise<never>(() => {}))));
  failed.catch(() => {}); // awaited through the races below; never an unhandled rejection

  let position = 0;
  let next = 0;
  try {
    for await (const record of from.exportSessions({ includeRewound: true, media: "refs" })) {
      position += 1;
      const id = record.session.id;
      const parent = record.session.parentSessionId;
      const parentInFlight = parent === null ? undefined : inFlight.get(parent);
      let lane = awaited.get(id);
      awaited.delete(id);
      if (lane === undefined) lane = parentInFlight?.lane;
      else if (parentInFlight !== undefined && parentInFlight.lane !== lane) await Promise.race([parentInFlight.item.done, failed]);
      if (lane === undefined) {
        if (parent !== null && parentInFlight === undefined && (await to.getSession(parent)) === null) {
          // The parent comes later in the export: it must go where this child waits for it.
          lane = all[next++ % all.length]!;
          awaited.set(parent, lane);
        } else lane = all[next++ % all.length]!;
      }
      const files = await spoolMedia(from, to, record, lane.spool, spooling);
      let finish!: () => void;
      const done = new Promise<void>((r) => (finish = r));
      const item: Item = { position, record, line: JSON.stringify(record), files, done, finish };
      inFlight.set(id, { lane, item });
      await Promise.race([lane.push(item), failed]);
    }
  } catch (error) {
    for (const lane of all) lane.close();
    await Promise.allSettled(imports);
    throw error;
  }
  for (const lane of all) lane.close();
  const reports = await Promise.all(imports);
  const problems: ImportProblem[] = [];
  reports.forEach((report, i) => {
    // A lane's report numbers its own lines; its refused sessions, in the same order, give their export positions.
    const refused = all[i]!.refused;
    report.errors.forEach((e, k) => {
      problems.push({ line: refused[k] ?? e.line, message: e.message });
    });
  });
  return problems.sort((a, b) => a.line - b.line);
}

/**
 * Spools the blobs of `record` the target does not hold and no other lane is storing to
 * `<dir>/<sha256>`, and leaves the others out of the record (their references resolve to the
 * stored blob). Returns the files written.
 */
async function spoolMedia(from: SessionDB, to: SessionDB, record: SessionRecord, dir: string, spooling: Set<string>): Promise<string[]> {
  if (record.media === undefined) return [];
  const files: string[] = [];
  const kept: NonNullable<SessionRecord["media"]> = [];
  for (const entry of record.media) {
    if (spooling.has(entry.sha256) || (await to.getMedia(entry.sha256)) !== null) continue;
    const chunks = await from.streamMedia(entry.sha256);
    if (chunks === null) continue; // removed since the export read the session: the reference dangles, as in the source
    const file = join(dir, entry.sha256);
    await pipeline(chunks, createWriteStream(file, { mode: 0o600 }));
    files.push(file);
    kept.push(entry);
    spooling.add(entry.sha256);
  }
  if (kept.length > 0) record.media = kept;
  else delete record.media;
  return files;
}
