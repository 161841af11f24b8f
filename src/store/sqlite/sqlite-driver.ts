/**
 * The better-sqlite3 driver, loaded with `require` (it is a CommonJS package): importing it
 * as ES module costs a parse of its sources for their export names (cjs-module-lexer), about
 * 6 ms on every process that opens a database, the `threadline` command line's included
 * (issue 31). Every runtime use of the driver in this folder takes it from here.
 *
 * @module
 */
import type BetterSqlite3 from "better-sqlite3";
import { createRequire } from "node:module";

/** The driver's `Database` class (as `import Database from "better-sqlite3"` gives it). */
export const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
