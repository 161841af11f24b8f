/** A static import of a source file: a project file (root-relative .ts path), a package name or a node: built-in. */
export interface StaticImport {
  kind: "file" | "package" | "builtin";
  id: string;
}
/** The static runtime imports of `file` (root-relative). */
export function staticImports(root: string, file: string): StaticImport[];
/** Every module the static graph from `entry` reaches (files as paths, others as `package:x` / `builtin:node:x`), each with the chain that reached it first. */
export function staticGraph(root: string, entry: string): Map<string, string[]>;
/** Whether the program table may load the module `id` (a key of {@link staticGraph}). */
export function allowedInProgramTable(id: string): boolean;
/** The action modules of the commands on stored sessions. */
export const STORE_ONLY_ACTIONS: RegExp;
/** What those actions must not load. */
export const HEAVY_FOR_STORE_ONLY: RegExp;
/** The problems of the CLI's import graph under `root` (empty: it keeps the rule). */
export function cliImportGraphProblems(root: string): string[];
