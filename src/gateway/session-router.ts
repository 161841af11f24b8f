/**
 * `SessionRouter` (formerly `SessionStore`): routes every session key to its conversation.
 * Routing entries live in the database beside the transcripts ({@link GatewayDB}); every
 * change that implies session rows (a reset ends one session and starts another) commits
 * with them in one conditional write, retried when another writer got there first.
 *
 * @module
 */
import {
  ConflictError,
  InvalidInputError,
  newSessionId,
  NotFoundError,
  type ConversationMessage,
  type InboundClaim,
  type LeaseFence,
  type ListRoutesOptions,
  type UsageUpdate,
  type NewMessage,
  type NewSession,
  type RewindResult,
  type Route,
  type RouteFields,
  type RouteWrite,
  type GatewayState,
  type MediaStore,
  type MetaStore,
  type SessionHistory,
} from "../store/index.js";
import { systemClock, type Clock } from "./clock.js";
import { IdentityAliases } from "./identity-aliases.js";
import { decide, isResetConfig, resetNoticeFor, type Decision, type DecisionRules } from "./reset-decision.js";
import { parseResetConfig, type ResetConfig } from "./reset-policy.js";
import { compressionWrite, fieldsOf, finishedTurnFields, newRouteFields, newSessionWrite, routeOf, withExtras, type TurnExtras } from "./route-writes.js";
import { toSessionEntry, type SessionEntry } from "./session-entry.js";
import { assertSafeKey, assertSafeSessionId, buildSessionKey, type KeySettings } from "./session-key.js";
import type { SessionSource } from "./session-source.js";

export { chatTypeOf } from "./reset-decision.js";
export { END_REASON_RESET, newRouteFields } from "./route-writes.js";

/** Default freshness window of a resume marker (seconds). */
export const DEFAULT_RESUME_FRESHNESS_SECONDS = 3600;
/** Reason a session ends when `/resume` switches away from it. */
export const END_REASON_SWITCH = "session_switch";

/**
 * The roles of the store a gateway calls, from its {@link SessionRouter} on: sessions and
 * transcripts, the gateway's own state (routing entries, identity aliases, inbound queues,
 * leases, handoffs), small named values (home channels, adapter state, restart markers) and
 * media (the attachments a turn stores). Any `SessionDB` is one.
 */
export type GatewayDB = SessionHistory & GatewayState & MetaStore & MediaStore;

/** Options of a {@link SessionRouter}. */
export interface SessionRouterOptions {
  /** Where entries and transcripts live (any `SessionDB`). */
  db: GatewayDB;
  /** Time source (default: the system clock). */
  clock?: Clock;
  /** How keys isolate users in groups and threads. */
  keySettings?: KeySettings;
  /** Reset policies (default: mode `none` everywhere). A raw config object is validated. */
  reset?: ResetConfig | Record<string, unknown>;
  /** A resume marker older than this starts a new session (default 3600 s; 0 disables the check). */
  resumeFreshnessSeconds?: number;
  /** Background work still running for a key blocks its expiry, automatic reset and pruning. */
  hasActiveProcesses?: (key: string) => boolean;
  /**
   * Random hex digits at the end of the session ids this store creates: 8 (default,
   * `YYYYMMDD_HHMMSS_<8 hex>`) or 6 (the terminal chat's shorter ids).
   */
  sessionIdHexDigits?: 6 | 8;
}

/** Options of {@link SessionRouter.getOrCreateSession}. */
export interface GetOrCreateOptions {
  /** Always start a fresh session (the old one ends with `session_reset`). */
  forceNew?: boolean;
  /**
   * The source's session key when the caller has just computed it with
   * {@link SessionRouter.sessionKeyFor} (saves resolving the aliases again).
   */
  key?: string;
}

/** Options of {@link SessionRouter.startTurn} on a new message. */
export interface StartTurnOptions extends GetOrCreateOptions {
  /** The lease the turn runs under: the write fails when another holder took it. */
  fence?: LeaseFence;
  /** The platform messages the turn's user messages are (see `RouteWrite.claims`). */
  claims?: InboundClaim[];
}

const MAX_ATTEMPTS = 8;

/**
 * The gateway's routing store: routes each session key to its current session (new
 * sessions by reset policy, `/new`, `/resume`, handoffs, compression) and marks its turns.
 *
 * @example
 * const store = new SessionRouter({ db, reset: { mode: "idle", idleMinutes: 120 } });
 * const entry = await store.getOrCreateSession({ platform: "telegram", chatType: "dm", chatId: "42", userId: "42" });
 * await store.appendToTranscript(entry.sessionId, { role: "user", content: "hi" });
 */
export class SessionRouter {
  readonly db: GatewayDB;
  readonly clock: Clock;
  readonly keySettings: KeySettings;
  readonly reset: ResetConfig;
  readonly aliases: IdentityAliases;
  readonly resumeFreshnessSeconds: number;
  /** Hex digits of the session ids this store creates (6 or 8). */
  readonly sessionIdHexDigits: 6 | 8;
  readonly #hasActiveProcesses: (key: string) => boolean;
  /** What a routing decision depends on besides the route. */
  readonly #rules: DecisionRules;

  constructor(options: SessionRouterOptions) {
    if (options === null || typeof options !== "object" || options.db === undefined) {
      throw new InvalidInputError("SessionRouter needs { db }: open one with openSessionDB().", { field: "db" });
    }
    this.db = options.db;
    this.clock = options.clock ?? systemClock;
    this.keySettings = { groupSessionsPerUser: true, threadSessionsPerUser: false, ...options.keySettings };
    this.reset = isResetConfig(options.reset) ? options.reset : parseResetConfig(options.reset ?? {});
    const freshness = options.resumeFreshnessSeconds ?? DEFAULT_RESUME_FRESHNESS_SECONDS;
    if (typeof freshness !== "number" || !Number.isFinite(freshness) || freshness < 0) {
      throw new InvalidInputError("resumeFreshnessSeconds must be a number of seconds ≥ 0 (0 disables the check).", {
        field: "resumeFreshnessSeconds",
      });
    }
    this.resumeFreshnessSeconds = freshness;
    const hexDigits = options.sessionIdHexDigits ?? 8;
    if (hexDigits !== 6 && hexDigits !== 8) {
      throw new InvalidInputError("sessionIdHexDigits must be 6 or 8.", { field: "sessionIdHexDigits" });
    }
    this.sessionIdHexDigits = hexDigits;
    this.#hasActiveProcesses = options.hasActiveProcesses ?? (() => false);
    this.aliases = new IdentityAliases(this.db);
    this.#rules = { reset: this.reset, resumeFreshnessSeconds: this.resumeFreshnessSeconds, hasActiveProcesses: this.#hasActiveProcesses };
  }

  // --- keys -------------------------------------------------------------------

  /** The session key of a message origin (identifiers resolved through the alias registry first). */
  async sessionKeyFor(source: SessionSource): Promise<string> {
    const canonical = await this.aliases.canonicalizeSource(source);
    return buildSessionKey(canonical, this.keySettings);
  }

  // --- routing ----------------------------------------------------------------

  /**
   * The entry for a message: the current session of its key, or a new one when the key
   * is new, suspended, stale after an interruption, due for a reset by policy, or routes
   * to a session that ended elsewhere. See docs/api.md for the full order of rules.
   */
  async getOrCreateSession(source: SessionSource, options: GetOrCreateOptions = {}): Promise<SessionEntry> {
    return this.#route(source, options, {});
  }

  async #route(source: SessionSource, options: GetOrCreateOptions, extras: TurnExtras): Promise<SessionEntry> {
    if (options.key !== undefined) assertSafeKey(options.key);
    const key = options.key ?? (await this.sessionKeyFor(source));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      let route = await this.db.getRoute(key);
      let decision: Decision;
      if (options.forceNew) {
        const old = route === null ? null : await this.db.getSession(route.sessionId);
        decision = { kind: "new", reason: null, auto: false, fresh: false, old };
      } else if (route === null) {
        const live = await this.db.findLiveSessionByKey(key);
        if (live !== null) {
          // The entry was lost (deleted, pruned, an older database) but its session lives on.
          const recovered = await this.db.writeRoute({
            key,
            expectedVersion: null,
            route: { ...newRouteFields(live.id, live.startedAt, source, null), updatedAt: live.lastActiveAt },
          });
          if (recovered === null) continue;
          route = recovered;
          decision = decide(this.#rules, route, live, now);
        } else {
          decision = { kind: "new", reason: null, auto: false, fresh: false, old: null };
        }
      } else {
        let session = await this.db.getSession(route.sessionId);
        if (session !== null && session.endedAt !== null && session.endReason === "compression") {
          const tip = await this.db.getSession(await this.db.getCompressionTip(session.id));
          if (tip !== null && tip.endedAt === null) {
            const followed = await this.db.writeRoute({
              key,
              expectedVersion: route.version,
              route: { ...fieldsOf(route), sessionId: tip.id },
            });
            if (followed === null) continue;
            route = followed;
            session = tip;
          }
        }
        if (session === null || session.endedAt !== null) {
          // Ended (or deleted) elsewhere: never route to it again.
          decision = { kind: "new", reason: null, auto: false, fresh: false, old: null };
        } else {
          decision = decide(this.#rules, route, session, now);
        }
      }

      if (decision.kind === "keep") {
        const bump: RouteWrite = {
          key,
          expectedVersion: decision.route.version,
          route: { ...fieldsOf(decision.route), updatedAt: now, turnStartedAt: extras.turnStartedAt ?? decision.route.turnStartedAt },
        };
        withExtras(bump, extras);
        const bumped = await this.db.writeRoute(bump);
        if (bumped === null) continue;
        // Counters are those read before this write (a turn's own messages are not in them yet).
        return toSessionEntry(bumped, decision.session);
      }
      const written = await this.#replace(key, route, source, now, decision, extras);
      if (written !== null) return written;
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try the message again.`);
  }

  /** Starts a new session for a key, ending the old one, in one write; `null` when another writer won. */
  async #replace(
    key: string,
    route: Route | null,
    source: SessionSource | null,
    now: number,
    decision: Extract<Decision, { kind: "new" }>,
    extras: TurnExtras = {},
  ): Promise<SessionEntry | null> {
    const id = newSessionId(now, this.sessionIdHexDigits);
    const write = newSessionWrite(key, route, source, now, id, decision, extras);
    const written = await this.db.writeRoute(write);
    if (written === null) return null;
    const entry = toSessionEntry(written, await this.db.getSession(id));
    if (decision.auto && decision.reason !== null) entry.resetNotice = resetNoticeFor(this.reset, decision.reason, decision.old, now, write.route.platform);
    return entry;
  }

  /**
   * Reads, changes and writes an entry, retrying on a concurrent change. `change`
   * returns the new fields, or `null` to leave the entry alone. Returns the written
   * route, `null` when nothing was written, `undefined` when the key has no entry.
   */
  async #mutate(key: string, change: (route: Route) => RouteFields | null): Promise<Route | null | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const route = await this.db.getRoute(key);
      if (route === null) return undefined;
      const fields = change(route);
      if (fields === null) return null;
      const written = await this.db.writeRoute({ key, expectedVersion: route.version, route: fields });
      if (written !== null) return written;
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  // --- operations ---------------------------------------------------------------

  /** Bumps an entry's activity time (and records the last prompt size). `false` when the key has no entry. */
  async updateSession(key: string, update: { lastPromptTokens?: number } = {}): Promise<boolean> {
    assertSafeKey(key);
    const tokens = update.lastPromptTokens;
    if (tokens !== undefined && (!Number.isSafeInteger(tokens) || tokens < 0)) {
      throw new InvalidInputError("lastPromptTokens must be a whole number ≥ 0.", { field: "lastPromptTokens" });
    }
    const now = this.clock.now();
    const written = await this.#mutate(key, (route) => ({
      ...fieldsOf(route),
      updatedAt: now,
      lastPromptTokens: tokens ?? route.lastPromptTokens,
    }));
    return written !== undefined && written !== null;
  }

  /**
   * `/new`, `/reset`: a fresh session for the key (`isFreshReset`), the old one ended
   * (its history kept), and the key's waiting queue cleared. Returns the new entry, or
   * `null` when the key has no entry.
   */
  async resetSession(key: string): Promise<SessionEntry | null> {
    assertSafeKey(key);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const route = await this.db.getRoute(key);
      if (route === null) return null;
      const old = await this.db.getSession(route.sessionId);
      const entry = await this.#replace(key, route, null, this.clock.now(), {
        kind: "new",
        reason: null,
        auto: false,
        fresh: true,
        old,
      });
      if (entry !== null) {
        await this.db.clearQueue(key);
        return entry;
      }
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  /**
   * `/resume`: routes the key to another session (reopened if it had ended), ending the
   * current one with `session_switch`. Returns the new entry, or `null` when the key has
   * no entry. Throws {@link NotFoundError} for an unknown session.
   */
  async switchSession(key: string, targetSessionId: string): Promise<SessionEntry | null> {
    assertSafeKey(key);
    assertSafeSessionId(targetSessionId);
    const target = await this.db.getSession(targetSessionId);
    if (target === null) {
      throw new NotFoundError(`No session with id "${targetSessionId}" to resume; list this chat's sessions to pick one.`);
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const route = await this.db.getRoute(key);
      if (route === null) return null;
      const now = this.clock.now();
      const fields: RouteFields = { ...newRouteFields(target.id, now, null, route) };
      const write: RouteWrite = { key, expectedVersion: route.version, route: fields };
      if (route.sessionId !== target.id) write.endSession = { id: route.sessionId, reason: END_REASON_SWITCH, endedAt: now };
      if (target.endedAt !== null) write.reopenSession = target.id;
      const current = await this.db.getSession(route.sessionId);
      if (current === null || current.endedAt !== null || route.sessionId === target.id) delete write.endSession;
      const written = await this.db.writeRoute(write);
      if (written !== null) return toSessionEntry(written, await this.db.getSession(target.id));
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  /**
   * Handoff: routes the key of `source` to an existing session (reopened if it had ended),
   * creating the key's entry when it has none. Unlike {@link switchSession}, nothing else
   * about the session changes: it stays live wherever else it is used (the CLI terminal it
   * came from keeps it). A different live session the key routed to before ends with
   * `session_switch`, as with `/resume`. The entry starts fresh (no reset, resume or turn
   * markers) with `source` as its origin. Returns the new entry. Throws
   * {@link NotFoundError} for an unknown session.
   */
  async bindKeyToSession(source: SessionSource, sessionId: string): Promise<SessionEntry> {
    if (typeof sessionId !== "string" || sessionId === "") {
      throw new InvalidInputError("bindKeyToSession needs the id of the session to route to.", { field: "sessionId" });
    }
    const key = await this.sessionKeyFor(source);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const target = await this.db.getSession(sessionId);
      if (target === null) {
        throw new NotFoundError(`No session with id "${sessionId}" to route ${key} to; list sessions to find the right id.`);
      }
      const route = await this.db.getRoute(key);
      const now = this.clock.now();
      const write: RouteWrite = { key, expectedVersion: route?.version ?? null, route: newRouteFields(target.id, now, source, route) };
      if (route !== null && route.sessionId !== target.id) {
        const previous = await this.db.getSession(route.sessionId);
        if (previous !== null && previous.endedAt === null) {
          write.endSession = { id: previous.id, reason: END_REASON_SWITCH, endedAt: now };
        }
      }
      if (target.endedAt !== null) write.reopenSession = target.id;
      const written = await this.db.writeRoute(write);
      if (written !== null) return toSessionEntry(written, await this.db.getSession(target.id));
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  /**
   * Compression (`/compress`, automatic): ends the current session with reason `compression`
   * and routes the key to a child session (its continuation, optionally titled `title #N`)
   * in ONE write: the routing switch, the end, the child and its first messages commit
   * together, so a crash never leaves a half-made child.
   *
   * Without `messages`, the child starts from `summary` alone; with them (the summary first,
   * then the copied head and tail: see `buildContinuation`), from those. With
   * `ifLastMessageId`, the write happens only while the parent's newest visible message is
   * still that one, and the call returns `null` (nothing written) when it is not or the entry
   * changed meanwhile: build the messages again and retry. `fields` overrides the child's
   * session fields (model, source, …; default: the parent's).
   */
  async compressInto(
    key: string,
    entry: SessionEntry,
    options: {
      title: string | null;
      summary?: string;
      messages?: NewMessage[];
      ifLastMessageId?: number | null;
      fence?: LeaseFence;
      fields?: Partial<NewSession>;
    },
  ): Promise<SessionEntry | null> {
    assertSafeKey(key);
    const guarded = options.ifLastMessageId !== undefined;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const route = await this.db.getRoute(key);
      if (route === null || route.sessionId !== entry.sessionId) {
        throw new ConflictError("The session changed while it was being compressed; try /compress again.");
      }
      const now = this.clock.now();
      const old = await this.db.getSession(route.sessionId);
      const id = newSessionId(now, this.sessionIdHexDigits);
      const write = compressionWrite(key, route, old, id, now, options);
      const written = await this.db.writeRoute(write);
      if (written === null) {
        if (guarded) return null;
        continue;
      }
      return toSessionEntry(written, await this.db.getSession(id));
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  /** `/stop`: the next message starts a new session. `false` when already suspended or no entry. */
  async suspendSession(key: string): Promise<boolean> {
    assertSafeKey(key);
    const written = await this.#mutate(key, (route) =>
      route.suspended ? null : { ...fieldsOf(route), suspended: true, resumePending: false, resumeReason: null },
    );
    return written !== undefined && written !== null;
  }

  /** Marks the session interrupted (resume it on the next message). Refused (`false`) when suspended. */
  async markResumePending(key: string, reason: string): Promise<boolean> {
    assertSafeKey(key);
    if (typeof reason !== "string" || reason.trim() === "") {
      throw new InvalidInputError("markResumePending needs a reason, e.g. restart_interrupted.", { field: "reason" });
    }
    const now = this.clock.now();
    const written = await this.#mutate(key, (route) =>
      route.suspended ? null : { ...fieldsOf(route), resumePending: true, resumeReason: reason, lastResumeMarkedAt: now },
    );
    return written !== undefined && written !== null;
  }

  /** Clears the resume marker. `false` when it was not set. */
  async clearResumePending(key: string): Promise<boolean> {
    assertSafeKey(key);
    const written = await this.#mutate(key, (route) =>
      route.resumePending ? { ...fieldsOf(route), resumePending: false, resumeReason: null, lastResumeMarkedAt: null } : null,
    );
    return written !== undefined && written !== null;
  }

  /**
   * After an unexpected exit: marks every entry touched in the last `maxAgeSeconds`
   * (default 120; an entry updated this very instant included) as interrupted —
   * `resumePending` with reason `restart_interrupted` — so its next message resumes the
   * same session. Entries already pending or suspended are left alone, so a second call
   * marks none. Returns how many it marked.
   */
  async suspendRecentlyActive(maxAgeSeconds = 120): Promise<number> {
    checkSeconds(maxAgeSeconds, "maxAgeSeconds");
    const now = this.clock.now();
    let count = 0;
    for await (const route of this.#routes({ updatedSince: now - maxAgeSeconds, suspended: false, resumePending: false })) {
      const written = await this.#mutate(route.key, (current) =>
        current.suspended || current.resumePending || current.updatedAt < now - maxAgeSeconds
          ? null
          : { ...fieldsOf(current), resumePending: true, resumeReason: "restart_interrupted", lastResumeMarkedAt: now },
      );
      if (written !== undefined && written !== null) count += 1;
    }
    return count;
  }

  /**
   * Deletes entries not updated for more than `maxAgeDays` days, never suspended ones or
   * keys with active background processes. `0` prunes nothing (pruning off, as the
   * `sessionStoreMaxAgeDays: 0` setting); a negative age is refused. Sessions and
   * transcripts stay. Returns how many.
   */
  async pruneOldEntries(maxAgeDays: number): Promise<number> {
    if (typeof maxAgeDays !== "number" || !Number.isFinite(maxAgeDays) || maxAgeDays < 0) {
      throw new InvalidInputError(
        `maxAgeDays must be a number of days ≥ 0 (got ${String(maxAgeDays)}); 0 prunes nothing. Pass how many days an entry may stay idle.`,
        { field: "maxAgeDays" },
      );
    }
    if (maxAgeDays === 0) return 0;
    const cutoff = this.clock.now() - maxAgeDays * 86_400;
    let count = 0;
    for await (const route of this.#routes({ updatedBefore: cutoff, suspended: false })) {
      if (this.#hasActiveProcesses(route.key)) continue;
      if (await this.db.deleteRoute(route.key, { expectedVersion: route.version })) count += 1;
    }
    return count;
  }

  /**
   * Entries, most recently updated first (ties in key order); with `activeMinutes` (a
   * number, or `{ activeMinutes }`), only those updated in the last `activeMinutes` minutes.
   */
  async listSessions(options?: number | { activeMinutes?: number }): Promise<SessionEntry[]> {
    const activeMinutes = typeof options === "object" && options !== null ? options.activeMinutes : options;
    if (activeMinutes !== undefined) checkSeconds(activeMinutes, "activeMinutes");
    const filter = activeMinutes === undefined ? {} : { updatedSince: this.clock.now() - activeMinutes * 60 };
    const routes: Route[] = [];
    for await (const route of this.#routes(filter)) routes.push(route);
    routes.sort((a, b) => b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const out: SessionEntry[] = [];
    for (const route of routes) out.push(toSessionEntry(route, await this.db.getSession(route.sessionId)));
    return out;
  }

  /** The entry of a key, or `null`. */
  async getEntry(key: string): Promise<SessionEntry | null> {
    assertSafeKey(key);
    const route = await this.db.getRoute(key);
    return route === null ? null : toSessionEntry(route, await this.db.getSession(route.sessionId));
  }

  /**
   * The entry routing to a session, or `null` — also for an empty, malformed or unknown
   * id (a lookup is a question; it never throws for the id it is asked about).
   */
  async lookupBySessionId(sessionId: string): Promise<SessionEntry | null> {
    if (!isPlausibleId(sessionId)) return null;
    const route = await this.db.findRouteBySession(sessionId);
    return route === null ? null : toSessionEntry(route, await this.db.getSession(route.sessionId));
  }

  /** Whether any key has an entry. */
  async hasAnySessions(): Promise<boolean> {
    return (await this.db.listRoutes({ limit: 1 })).items.length > 0;
  }

  // --- turns --------------------------------------------------------------------

  /**
   * Starts a turn on a new message: the routing decision of {@link getOrCreateSession}, the
   * turn marker and the user message(s) of the turn, committed together in one write (one
   * commit per inbound message). The messages go to the session the entry routes to afterwards.
   * `claims` are taken in that write: one claimed already rejects with `InboundClaimedError`, nothing written.
   */
  startTurn(source: SessionSource, messages: NewMessage[], options?: StartTurnOptions): Promise<SessionEntry>;
  /**
   * Starts a turn again on the key's current session, its user message being stored already
   * (a turn resumed after a restart, or a re-run of a failed one): no routing decision and no
   * message; `turnStartedAt` and `updatedAt` become now. A restart that finds the marker still
   * set counts towards the stuck-loop guard. Resolves `false` when the key has no entry.
   */
  startTurn(key: string): Promise<boolean>;
  async startTurn(target: SessionSource | string, messages: NewMessage[] = [], options: StartTurnOptions = {}): Promise<SessionEntry | boolean> {
    if (typeof target === "string") {
      assertSafeKey(target);
      const now = this.clock.now();
      const written = await this.#mutate(target, (route) => ({ ...fieldsOf(route), turnStartedAt: now, updatedAt: now }));
      return written !== undefined && written !== null;
    }
    const extras: TurnExtras = { turnStartedAt: this.clock.now(), appendMessages: messages };
    if (options.fence !== undefined) extras.fence = options.fence;
    if (options.claims !== undefined) extras.claims = options.claims;
    return this.#route(target, options, extras);
  }

  /**
   * Finishes a turn in one write: its messages appended, its usage added and the entry
   * updated — `ok` clears the turn and resume markers, the reset flags and the stuck-loop
   * count, bumps `updatedAt` and records `lastPromptTokens`; `failed` clears only the turn
   * marker; `interrupted` (shutdown) keeps the turn marker so the next start counts and
   * resumes it. `sessionId` is the session the turn ran in (default: the one the key routes
   * to now). When the key routes to another session meanwhile, the turn is stored in its own
   * session and the entry is left alone (`false`). A `failed` turn with nothing to store,
   * no fence and no turn marker set writes nothing (`false`). Resolves `false` too when the
   * key has no entry.
   */
  async finishTurn(
    key: string,
    turn: {
      sessionId?: string | undefined;
      messages?: NewMessage[] | undefined;
      usage?: UsageUpdate | undefined;
      lastPromptTokens?: number | undefined;
      outcome: "ok" | "failed" | "interrupted";
      fence?: LeaseFence | undefined;
      /**
       * The entry as the caller last wrote it (the one `startTurn` returned): the first attempt
       * writes over it without reading the entry again; when the entry changed meanwhile, its
       * version no longer matches, nothing is written, and the next attempt reads it.
       */
      route?: Route | undefined;
    },
  ): Promise<boolean> {
    assertSafeKey(key);
    const messages = turn.messages ?? [];
    const known = turn.route !== undefined && turn.route.key === key ? routeOf(turn.route) : null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const route = attempt === 0 && known !== null ? known : await this.db.getRoute(key);
      const sessionId = turn.sessionId ?? route?.sessionId;
      if (sessionId === undefined) return false;
      if (route === null || route.sessionId !== sessionId) {
        // The key moved on meanwhile: store the turn in its own session, leave the entry alone.
        const options = turn.fence === undefined ? {} : { fence: turn.fence };
        if (messages.length > 0) await this.db.appendTurn(sessionId, messages, options);
        if (turn.usage !== undefined) await this.db.recordUsage(sessionId, turn.usage, options);
        return false;
      }
      if (turn.outcome === "failed" && route.turnStartedAt === null && messages.length === 0 && turn.usage === undefined && turn.fence === undefined) {
        return false;
      }
      const write: RouteWrite = {
        key,
        expectedVersion: route.version,
        route: finishedTurnFields(route, turn.outcome, this.clock.now(), turn.lastPromptTokens),
      };
      if (messages.length > 0) write.appendMessages = messages;
      if (turn.usage !== undefined) write.recordUsage = turn.usage;
      if (turn.fence !== undefined) write.fence = turn.fence;
      if ((await this.db.writeRoute(write)) !== null) return true;
    }
    throw new ConflictError(`The routing entry ${key} kept changing under concurrent writers; try again.`);
  }

  /** Writes entry fields as given (for the recovery and expiry machinery). */
  async patchEntry(key: string, change: (route: Route) => Partial<RouteFields> | null): Promise<Route | null> {
    assertSafeKey(key);
    const written = await this.#mutate(key, (route) => {
      const patch = change(route);
      return patch === null ? null : { ...fieldsOf(route), ...patch };
    });
    return written ?? null;
  }

  // --- transcripts ------------------------------------------------------------------

  /** Appends one message to a session's transcript; returns its id. */
  async appendToTranscript(sessionId: string, message: NewMessage): Promise<number> {
    return this.db.appendMessage(sessionId, message);
  }

  /** Replaces a session's transcript (rewound messages included) with these messages. */
  async rewriteTranscript(sessionId: string, messages: NewMessage[]): Promise<number[]> {
    return this.db.replaceMessages(sessionId, messages);
  }

  /** The transcript as model messages; `limit` keeps only the last N (a bounded window). */
  async loadTranscript(sessionId: string, options: { limit?: number } = {}): Promise<ConversationMessage[]> {
    const all = await this.db.getConversation(sessionId);
    if (options.limit === undefined) return all;
    if (!Number.isSafeInteger(options.limit) || options.limit < 1) {
      throw new InvalidInputError("limit must be a whole number ≥ 1.", { field: "limit" });
    }
    return all.slice(-options.limit);
  }

  /** `/undo [n]`: hides the last n user turns (default 1) of a session. */
  async rewindSession(sessionId: string, turns = 1): Promise<RewindResult> {
    return this.db.rewind(sessionId, turns);
  }

  async *#routes(filter: ListRoutesOptions): AsyncGenerator<Route> {
    let cursor: string | null = null;
    do {
      const page = await this.db.listRoutes({ ...filter, limit: 500, cursor });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  /** Every entry matching a filter, page by page. */
  routes(filter: ListRoutesOptions = {}): AsyncGenerator<Route> {
    return this.#routes(filter);
  }

  /** Whether background work blocks expiry, reset and pruning of a key. */
  hasActiveProcesses(key: string): boolean {
    return this.#hasActiveProcesses(key);
  }
}

/**
 * Whether a value could be a stored session id at all: a non-blank, well-formed string of
 * at most 256 code units with no control character, path separator or `..` (what the
 * store accepts as the session of a routing entry).
 */
function isPlausibleId(value: unknown): value is string {
  return (
    typeof value === "string" &&
    value.trim() !== "" &&
    value.length <= 256 &&
    value.isWellFormed() &&
    !/[\u0000-\u001f\u007f/\\]/u.test(value) &&
    !value.includes("..")
  );
}

function checkSeconds(value: unknown, field: string): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidInputError(`${field} must be a number ≥ 0.`, { field });
  }
}
