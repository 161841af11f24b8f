/**
 * The gateway state of the store core ({@link StoreCore}): routing entries, identity aliases, the
 * inbound queues, leases, handoffs and pairing, as functions of the dialect.
 *
 * @module
 */
import type {
  AliasEntry,
  ClaimHandoffOptions,
  ClaimInboundOptions,
  EnqueueResult,
  Handoff,
  HandoffResult,
  InboundClaim,
  Lease,
  LeaseOptions,
  ListAliasEntriesOptions,
  ListPairingOptions,
  ListRoutesOptions,
  NewHandoff,
  NewQueuedEvent,
  Page,
  PairingApproveOptions,
  PairingApproveOutcome,
  PairingCodeOutcome,
  PairingCodeRequestOptions,
  PairingList,
  PruneInboundClaimsOptions,
  QueuedItem,
  Route,
  RouteWrite,
  Session,
} from "../contract.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { ConflictError, InvalidInputError } from "../errors.js";
import { checkClaimHandoff, checkHandoffResult, checkNewHandoff } from "../handoff-input.js";
import { checkId, checkLimit, checkTime, prepareNewSession } from "../input-validation.js";
import { checkListPairing, checkPairingApproval, checkPairingCodeRequest } from "../pairing-input.js";
import { checkItemId, checkLeaseRequest, checkLeaseToken, checkListRoutes, checkPathSafe, checkQueuedEvent, checkRouteWrite } from "../routing-input.js";
import { type SessionRow, toSession } from "../session-rows.js";
import * as aliases from "./alias-steps.js";
import * as claims from "./inbound-claims.js";
import { now } from "./clock.js";
import * as leases from "./lease-steps.js";
import { checkFence } from "./lease-steps.js";
import * as pairing from "./pairing-steps.js";
import * as queue from "./queue-steps.js";
import { applyUsage, endSessionRow, insertNewSession, reopenSessionRow, requireSession } from "./session-steps.js";
import { type Steps, all, column, one, run } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { lastMessageIs } from "./transcript-steps.js";

/** The write lane of a key's queue (apart from session lanes: a session id never holds a NUL). */
const queueLane = (key: string): string => `\u0000queue:${key}`;

export async function getRoute(d: StoreDialect<unknown>, key: string): Promise<Route | null> {
  checkId(key, "key");
  return d.read("reading a routing entry", () => d.getRoute(key));
}

export async function findRouteBySession(d: StoreDialect<unknown>, sessionId: string): Promise<Route | null> {
  checkId(sessionId, "sessionId");
  return d.read("finding a routing entry", () => d.routeBySession(sessionId));
}

export async function listRoutes(d: StoreDialect<unknown>, options: ListRoutesOptions = {}): Promise<Page<Route>> {
  const checked = checkListRoutes(options);
  return d.read("listing routing entries", () => d.listRoutes(checked));
}

/**
 * One transaction: the fence (if any) is checked first; then the entry is claimed at the
 * expected version (a concurrent writer of the key in any process waits, then sees the new
 * version); the session changes follow under it.
 */
export async function writeRoute(d: StoreDialect<unknown>, write: RouteWrite): Promise<Route | null> {
  const at = now();
  const checked = checkRouteWrite(write, at);
  const taking = claims.checkClaims(write.claims);
  const prepared = checked.createSession === null ? null : prepareNewSession(checked.createSession, at);
  const appended = checked.appendMessages === null ? null : checked.appendMessages.map((m) => d.storeMessage(m));
  // With messages to append, the write joins the session's lane, so this instance's appends land in call order.
  const lane = appended === null ? undefined : checked.route.sessionId;
  // Made only when the guard misses (an Error captures a stack trace: not on every write).
  let guardMissed: ConflictError | null = null;
  return d
    .write(
      `writing the routing entry ${checked.key}`,
      function* (): Steps<Route | null> {
        yield* checkFence(checked.fence, d);
        const claim = yield* d.claimRoute(checked.key, checked.expectedVersion, checked.route);
        if (claim === null) return null;
        yield* claims.takeClaims(taking, at);
        if (checked.endSession !== null) {
          const { id, reason, endedAt, ifLastMessageId } = checked.endSession;
          // A message appended since the caller read the session: nothing is written (rolled back).
          if (ifLastMessageId !== undefined && !(yield* lastMessageIs(d, id, ifLastMessageId))) {
            guardMissed = new ConflictError("The session got a new message while it was being continued.");
            throw guardMissed;
          }
          yield* endSessionRow(d, id, reason, endedAt);
        }
        if (checked.createSession !== null) yield* insertNewSession(d, checked.createSession, prepared!);
        if (checked.reopenSession !== null) yield* reopenSessionRow(d, checked.reopenSession);
        // The routed-to session must exist; its row lock keeps a concurrent delete out until commit.
        yield* requireSession(d, checked.route.sessionId, true);
        if (appended !== null) yield* d.appendMessages(checked.route.sessionId, appended);
        if (checked.recordUsage !== null) yield* applyUsage(d, checked.route.sessionId, checked.recordUsage);
        return yield* d.storeRoute(claim, checked.key, checked.route, checked.expectedVersion);
      },
      lane,
    )
    .catch((error: unknown) => {
      if (guardMissed !== null && error === guardMissed) return null;
      throw error;
    });
}

export async function deleteRoute(d: StoreDialect<unknown>, key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
  checkId(key, "key");
  const expected = options.expectedVersion;
  return d.write(`deleting the routing entry ${key}`, function* () {
    const deleted =
      expected === undefined
        ? yield* run("DELETE FROM routes WHERE key = ?", [key])
        : yield* run("DELETE FROM routes WHERE key = ? AND version = ?", [key, expected]);
    return deleted > 0;
  });
}

export async function findLiveSessionByKey(d: StoreDialect<unknown>, key: string): Promise<Session | null> {
  checkId(key, "key");
  return d.read("finding the live session of a key", function* () {
    const row = yield* one<SessionRow>("SELECT * FROM sessions WHERE session_key = ? AND ended_at IS NULL ORDER BY started_at DESC, id DESC LIMIT 1", [
      d.encodeText(key),
    ]);
    return row === undefined ? null : toSession(row, d.decodeText);
  });
}

export async function recordAlias(d: StoreDialect<unknown>, namespace: string, a: string, b: string): Promise<string> {
  checkId(namespace, "namespace");
  checkId(a, "a");
  checkId(b, "b");
  return d.write("recording an identity alias", function* () {
    yield* d.lockAliasNamespace(namespace);
    return yield* aliases.recordAlias(namespace, a, b);
  });
}

export async function resolveAlias(d: StoreDialect<unknown>, namespace: string, id: string): Promise<string> {
  checkId(namespace, "namespace");
  checkId(id, "id");
  return d.read("resolving an identity alias", () => aliases.resolveAlias(namespace, id));
}

export async function listAliases(d: StoreDialect<unknown>, namespace: string, id: string): Promise<string[]> {
  checkId(namespace, "namespace");
  checkId(id, "id");
  return d.read("listing identity aliases", () => aliases.listAliases(namespace, id, d.bytewiseOrder));
}

/** The ordering name of an alias listing's cursor. */
const ALIAS_ORDER = "aliases";

export async function listAliasEntries(d: StoreDialect<unknown>, options: ListAliasEntriesOptions = {}): Promise<Page<AliasEntry>> {
  const limit = checkLimit(options.limit, 100);
  const after = options.cursor === undefined || options.cursor === null ? null : aliasCursorPosition(options.cursor);
  const rows = await d.read("listing identity aliases", () =>
    all<AliasEntry>(
      `SELECT namespace, alias, canonical FROM identity_aliases${after === null ? "" : " WHERE (namespace, alias) > (?, ?)"} ORDER BY namespace, alias LIMIT ?`,
      [...(after ?? []), limit + 1],
    ),
  );
  const items = rows.slice(0, limit).map((row) => ({ namespace: row.namespace, alias: row.alias, canonical: row.canonical }));
  const last = items[items.length - 1];
  const nextCursor =
    rows.length > limit && last !== undefined ? encodeCursor({ order: ALIAS_ORDER, key: 0, id: JSON.stringify([last.namespace, last.alias]) }) : null;
  return { items, nextCursor };
}

/** The (namespace, alias) after which an alias listing's next page starts. */
function aliasCursorPosition(cursor: string): [string, string] {
  const { id } = decodeCursor(cursor, ALIAS_ORDER);
  let parsed: unknown;
  try {
    parsed = JSON.parse(id);
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
    throw new InvalidInputError("The cursor is not valid (malformed). Pass the nextCursor of the previous page unchanged.", { field: "cursor" });
  }
  return [parsed[0], parsed[1]];
}

export async function enqueue(d: StoreDialect<unknown>, key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
  checkPathSafe(key, "key");
  const checked = checkQueuedEvent(event, options, now());
  const taking = claims.checkClaims(event.claims);
  // The queue lane keeps this instance's enqueues of a key in call order (FIFO as called).
  return queueWrite(d, `queueing an event for ${key}`, key, () =>
    claims.enqueueClaimed(taking, checked.event.at, key, () => queue.enqueue(key, checked.event, checked.maxDepth)),
  ).catch(claims.notQueuedResult);
}

export async function listQueue(d: StoreDialect<unknown>, key: string): Promise<QueuedItem[]> {
  checkId(key, "key");
  return d.read("reading a queue", () => queue.queueItems(key));
}

export async function claimQueued(d: StoreDialect<unknown>, key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
  checkId(key, "key");
  const at = checkTime(options.at, "at", now());
  // Most claims find the queue empty (a gateway looks after every turn): a read answers
  // those without taking a writer lock. A later enqueue is claimed by the next look.
  const waiting = await d.read(`looking at the queue of ${key}`, () => queue.hasQueued(key), queueLane(key));
  if (!waiting) return null;
  return queueWrite(d, `claiming the next queued event of ${key}`, key, () => queue.claimQueued(key, at));
}

export async function completeQueued(d: StoreDialect<unknown>, key: string, itemId: number): Promise<boolean> {
  checkId(key, "key");
  checkItemId(itemId);
  return queueWrite(d, "completing a queued event", key, () => queue.completeQueued(key, itemId));
}

export async function clearQueue(d: StoreDialect<unknown>, key: string): Promise<number> {
  checkId(key, "key");
  return queueWrite(d, `clearing the queue of ${key}`, key, () => queue.clearQueue(key));
}

/** A write to a key's queue: in the key's lane, under its writer lock. */
function queueWrite<T>(d: StoreDialect<unknown>, doing: string, key: string, change: () => Steps<T>): Promise<T> {
  return d.write(
    doing,
    function* () {
      yield* d.lockQueue(key);
      return yield* change();
    },
    queueLane(key),
  );
}

export async function listQueuedKeys(d: StoreDialect<unknown>): Promise<string[]> {
  return d.read("listing queued keys", () => column<string>("SELECT DISTINCT key FROM inbound_queue ORDER BY key"));
}

export async function acquireLease(d: StoreDialect<unknown>, key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
  const request = checkLeaseRequest(key, holder, options, now());
  return d.writeStatement(`acquiring the lease on ${request.key}`, () => leases.acquireLease(request));
}

export async function renewLease(d: StoreDialect<unknown>, key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
  const request = checkLeaseRequest(key, holder, options, now());
  checkLeaseToken(token);
  return d.writeStatement(`renewing the lease on ${request.key}`, () => leases.renewLease(request, token));
}

export async function releaseLease(d: StoreDialect<unknown>, key: string, holder: string, token: number): Promise<boolean> {
  checkPathSafe(key, "key");
  checkId(holder, "holder");
  checkLeaseToken(token);
  return d.writeStatement(`releasing the lease on ${key}`, () => leases.releaseLease(key, holder, token));
}

export async function getLease(d: StoreDialect<unknown>, key: string): Promise<Lease | null> {
  checkPathSafe(key, "key");
  return d.read("reading a lease", () => leases.getLease(key));
}

export async function claimInbound(d: StoreDialect<unknown>, claim: InboundClaim, options: ClaimInboundOptions = {}): Promise<boolean> {
  const checked = claims.checkClaim(claim);
  const at = checkTime(options.at, "at", now());
  return d.write("claiming an inbound message", () => claims.takeClaim(checked, at));
}

export async function pruneInboundClaims(d: StoreDialect<unknown>, options: PruneInboundClaimsOptions): Promise<number> {
  const before = claims.checkPruneBefore(options);
  return d.write("pruning inbound claims", () => claims.pruneClaims(before));
}

export async function createHandoff(d: StoreDialect<unknown>, input: NewHandoff): Promise<Handoff> {
  const checked = checkNewHandoff(input, now());
  return d.write(`recording a handoff of ${checked.sessionId}`, () => d.createHandoff(checked));
}

export async function getHandoff(d: StoreDialect<unknown>, id: string): Promise<Handoff | null> {
  checkId(id, "id");
  return d.read("reading a handoff", () => d.getHandoff(id));
}

export async function claimHandoff(d: StoreDialect<unknown>, options: ClaimHandoffOptions): Promise<Handoff | null> {
  const checked = checkClaimHandoff(options, now());
  return d.write("claiming a handoff", () => d.claimHandoff(checked));
}

export async function finishHandoff(d: StoreDialect<unknown>, id: string, result: HandoffResult): Promise<Handoff> {
  checkId(id, "id");
  const checked = checkHandoffResult(result, now());
  return d.write(`finishing handoff ${id}`, () => d.finishHandoff(id, checked));
}

export async function requestPairingCode(
  d: StoreDialect<unknown>,
  platform: string,
  userId: string,
  options?: PairingCodeRequestOptions,
): Promise<PairingCodeOutcome> {
  const checked = checkPairingCodeRequest(platform, userId, options);
  return d.write(`requesting a pairing code on ${checked.platform}`, function* () {
    yield* d.lockPairing(checked.platform);
    return yield* pairing.requestCode(checked, (t) => d.encodeText(t));
  });
}

export async function approvePairingCode(
  d: StoreDialect<unknown>,
  platform: string,
  code: string,
  options?: PairingApproveOptions,
): Promise<PairingApproveOutcome> {
  const checked = checkPairingApproval(platform, code, options);
  return d.write(`approving a pairing code on ${checked.platform}`, function* () {
    yield* d.lockPairing(checked.platform);
    return yield* pairing.approveCode(checked, d.decodeText);
  });
}

export async function isPairingApproved(d: StoreDialect<unknown>, platform: string, userId: string): Promise<boolean> {
  checkId(platform, "platform");
  checkId(userId, "userId");
  return d.read("reading a pairing approval", () => pairing.isApproved(platform, userId));
}

export async function listPairing(d: StoreDialect<unknown>, options?: ListPairingOptions): Promise<PairingList> {
  const { platform, now } = checkListPairing(options);
  return d.read("listing pairing", () => pairing.listPairing(platform, now, d.decodeText));
}

export async function revokePairing(d: StoreDialect<unknown>, platform: string, userId: string): Promise<boolean> {
  checkId(platform, "platform");
  checkId(userId, "userId");
  return d.write(`revoking a pairing approval on ${platform}`, function* () {
    yield* d.lockPairing(platform);
    return yield* pairing.revoke(platform, userId);
  });
}
