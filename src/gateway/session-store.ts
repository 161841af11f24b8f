/**
 * `SessionStore`, the former name of {@link SessionRouter}, kept so that code written against
 * it goes on working: the same class, plus the second turn API it used to have
 * (`beginTurn`/`completeTurn`/`failTurn`), now written over `startTurn`/`finishTurn`.
 *
 * @module
 */
import { SessionRouter, type SessionRouterOptions } from "./session-router.js";

/**
 * The gateway's routing store, by its former name.
 *
 * @deprecated Renamed {@link SessionRouter} (it routes session keys to sessions), whose one
 * turn API is `startTurn`/`finishTurn`.
 */
export class SessionStore extends SessionRouter {
  /** @deprecated Use `startTurn(key)`. */
  beginTurn(key: string): Promise<boolean> {
    return this.startTurn(key);
  }

  /** @deprecated Use `finishTurn(key, { outcome: "ok", lastPromptTokens })`. */
  completeTurn(key: string, update: { lastPromptTokens?: number } = {}): Promise<boolean> {
    return this.finishTurn(key, { outcome: "ok", lastPromptTokens: update.lastPromptTokens });
  }

  /** @deprecated Use `finishTurn(key, { outcome: "failed" })`. */
  failTurn(key: string): Promise<boolean> {
    return this.finishTurn(key, { outcome: "failed" });
  }
}

/**
 * Options of a {@link SessionRouter}, by their former name.
 *
 * @deprecated Renamed {@link SessionRouterOptions}.
 */
export type SessionStoreOptions = SessionRouterOptions;
