/**
 * The check the store core makes before a call that would not otherwise reach the database.
 *
 * @module
 */
import { StoreClosedError } from "../errors.js";
import type { StoreDialect } from "./store-dialect.js";

/** Throws {@link StoreClosedError} once the dialect is closed. */
export function assertOpen(d: StoreDialect<unknown>): void {
  if (d.closed) throw new StoreClosedError();
}
