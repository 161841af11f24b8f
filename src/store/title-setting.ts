/**
 * Setting a title that another session may already hold: an unrelated session takes the
 * collision form (`t (2)`), a continuation of a titled parent the next lineage number (`t #2`).
 *
 * @module
 */
import type { SessionHistory } from "./contract.js";
import { ConflictError } from "./errors.js";

/**
 * How a wanted title relates to the session that may hold it: `unrelated` (an auto-title, a
 * title asked for by a program) takes `t (N)`; `continuation` (a child continuing a titled
 * parent, such as a compression continuation) takes `t #N`.
 */
export type TitleRelation = "unrelated" | "continuation";

/** How many times a title taken between the lookup and the write is looked up again. */
const ATTEMPTS = 5;

/**
 * Sets session `id`'s title to `title`, or to its free form when another session holds it
 * ({@link SessionHistory.freeTitle} or {@link SessionHistory.nextTitleInLineage}, by
 * `relation`). Returns the stored title, or `null` when every attempt lost a race.
 *
 * @example
 * await setTitleAvoidingCollision(db, id, "Hello there", "unrelated"); // "Hello there (2)" if taken
 */
export async function setTitleAvoidingCollision(
  db: Pick<SessionHistory, "setTitle" | "freeTitle" | "nextTitleInLineage">,
  id: string,
  title: string,
  relation: TitleRelation,
): Promise<string | null> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const candidate = relation === "continuation" ? await db.nextTitleInLineage(title) : await db.freeTitle(title);
    try {
      return await db.setTitle(id, candidate);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  return null;
}
