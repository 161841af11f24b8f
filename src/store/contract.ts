/**
 * The storage contract (`SessionDB`, its roles and records), one file per role in `./contract/`.
 * This path stays so that existing imports of `contract.js` resolve.
 *
 * @module
 */
export * from "./contract/index.js";
