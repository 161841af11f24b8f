/**
 * The store core's clock: the current time in Unix epoch seconds (float), the unit of every
 * time the contract reads and writes.
 *
 * @module
 */

/** Now, in Unix epoch seconds (float). */
export const now = (): number => Date.now() / 1000;
