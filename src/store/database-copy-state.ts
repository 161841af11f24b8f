/**
 * The durable state beside the transcripts that `db copy` carries over (see database-copy.ts),
 * each table read a page at a time through the contract and written through it:
 *
 * - execution sessions (workflows before their steps, a page per transaction; versions restart at 1);
 * - memory (each record with its time; versions restart at 1);
 * - pairing approvals (who approved them and when, kept);
 * - identity aliases (every group rebuilt with the same canonical id);
 * - routing entries (which session each chat key routes to, with their flags; versions restart at 1);
 * - meta values callers stored (home channels, adapter state such as polling offsets, restart markers).
 *
 * @module
 */
import type { ExecutionWrite, SessionDB } from "./contract.js";
import { ConflictError } from "./errors.js";

/** How many records of each kind of state were copied. */
export interface StateCounts {
  executions: number;
  memories: number;
  pairingApprovals: number;
  aliases: number;
  routes: number;
  meta: number;
}

/** Execution records per page (and per write transaction): their results may be large. */
const EXECUTION_PAGE = 50;

/**
 * Copies the state into `to`, adding to `counts`; returns the records the target refused
 * (`"route <key>: <why>"`), each left out with nothing of it written.
 */
export async function copyGatewayState(from: SessionDB, to: SessionDB, counts: StateCounts): Promise<string[]> {
  const errors: string[] = [];
  const attempt = async (what: string, write: () => Promise<unknown>): Promise<boolean> => {
    try {
      await write();
      return true;
    } catch (error) {
      errors.push(`${what}: ${(error as Error).message}`);
      return false;
    }
  };
  await copyExecutions(from, to, counts, attempt);

  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await from.listMemories({ limit: 200, cursor });
    for (const m of page.items) {
      const what = `memory ${m.owner.platform}/${m.owner.userId} ${m.kind}`;
      if (await attempt(what, () => to.writeMemory({ owner: m.owner, kind: m.kind, entries: m.entries, expectedVersion: null, now: m.updatedAt })))
        counts.memories += 1;
    }
    cursor = page.nextCursor;
  }

  // Unpaged in the contract: approvals are one row per approved person.
  for (const a of (await from.listPairing()).approved) {
    const copied = await attempt(`pairing approval ${a.platform}/${a.userId}`, async () => {
      // The contract writes an approval only by approving a code: ask for one at the original
      // time and approve it at once, by the original approver (the code never leaves here).
      const asked = await to.requestPairingCode(a.platform, a.userId, { userName: a.userName, now: a.approvedAt });
      if (asked.kind !== "code") throw new ConflictError(`the target answered "${asked.kind}" to the pairing request`);
      const approved = await to.approvePairingCode(a.platform, asked.code, { by: a.approvedBy, now: a.approvedAt });
      if (approved.kind !== "approved") throw new ConflictError(`the target answered "${approved.kind}" to the approval`);
    });
    if (copied) counts.pairingApprovals += 1;
  }

  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await from.listAliasEntries({ limit: 1000, cursor });
    for (const e of page.items) {
      // A group's own row (alias = canonical) comes back with the first of its members.
      if (e.alias === e.canonical) continue;
      if (await attempt(`alias ${e.namespace}/${e.alias}`, () => to.recordAlias(e.namespace, e.alias, e.canonical))) counts.aliases += 1;
    }
    cursor = page.nextCursor;
  }

  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await from.listRoutes({ limit: 1000, cursor });
    for (const { key, version: _version, ...route } of page.items) {
      const copied = await attempt(`route ${key}`, async () => {
        if ((await to.writeRoute({ key, expectedVersion: null, route })) === null)
          throw new ConflictError("the target has a routing entry for this key already");
      });
      if (copied) counts.routes += 1;
    }
    cursor = page.nextCursor;
  }

  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await from.listMeta({ limit: 1000, cursor });
    for (const { key, value } of page.items) {
      if (await attempt(`meta ${key}`, () => to.setMeta(key, value))) counts.meta += 1;
    }
    cursor = page.nextCursor;
  }
  return errors;
}

/** Workflows and single runs first (pass 1), then workflow steps (pass 2), so every step's parent is there. */
async function copyExecutions(
  from: SessionDB,
  to: SessionDB,
  counts: StateCounts,
  attempt: (what: string, write: () => Promise<unknown>) => Promise<boolean>,
): Promise<void> {
  for (const steps of [false, true]) {
    for (let cursor: string | null | undefined; cursor !== null; ) {
      const page = await from.listExecutions({ limit: EXECUTION_PAGE, cursor, directOnly: !steps });
      const put: ExecutionWrite[] = [];
      for (const summary of page.items) {
        if (steps && summary.parentId === null) continue;
        const record = await from.getExecution(summary.id);
        if (record === null) continue; // deleted since the page was read
        put.push({
          id: record.id,
          kind: record.kind,
          name: record.name,
          baseId: record.baseId,
          parentId: record.parentId,
          userId: record.userId,
          createdAt: record.createdAt,
          updatedAt: record.updatedAt,
          result: record.result,
          messageCount: record.messageCount,
          agentsInvolved: record.agentsInvolved,
          expectedVersion: null,
        });
      }
      if (put.length > 0) {
        try {
          await to.writeExecutions({ put });
          counts.executions += put.length;
        } catch {
          // One bad record spoils its page's transaction: write them one at a time to keep the others.
          for (const one of put) if (await attempt(`execution session ${one.id}`, () => to.writeExecutions({ put: [one] }))) counts.executions += 1;
        }
      }
      cursor = page.nextCursor;
    }
  }
}
