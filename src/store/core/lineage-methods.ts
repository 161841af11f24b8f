/**
 * Lineage of the store core ({@link StoreCore}): ancestors, descendants, the compression tip and
 * continuing a session, as functions of the dialect.
 *
 * @module
 */
import type { ContinuationWrite, Session } from "../contract.js";
import { ConflictError, InvalidInputError } from "../errors.js";
import { checkId, checkNewSession, checkTime, normalizeMessage, prepareNewSession } from "../input-validation.js";
import { checkLastMessageId, fenceOf } from "../routing-input.js";
import { toSession } from "../session-rows.js";
import { now } from "./clock.js";
import { checkFence } from "./lease-steps.js";
import { ancestorRows, compressionTip, descendantRows } from "./lineage-steps.js";
import { endSessionRow, insertNewSession, requireRow, requireSession } from "./session-steps.js";
import type { Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { lastMessageIs } from "./transcript-steps.js";

export async function getAncestors(d: StoreDialect<unknown>, id: string): Promise<Session[]> {
  checkId(id, "id");
  return d.read("reading ancestors", function* () {
    yield* requireSession(d, id);
    return (yield* ancestorRows(id)).map((row) => toSession(row, d.decodeText));
  });
}

export async function getDescendants(d: StoreDialect<unknown>, id: string): Promise<Session[]> {
  checkId(id, "id");
  return d.read("reading descendants", function* () {
    yield* requireSession(d, id);
    return (yield* descendantRows(id)).map((row) => toSession(row, d.decodeText));
  });
}

export async function getCompressionTip(d: StoreDialect<unknown>, id: string): Promise<string> {
  checkId(id, "id");
  return d.read("finding the compression tip", function* () {
    yield* requireSession(d, id);
    return yield* compressionTip(id);
  });
}

export async function continueSession(d: StoreDialect<unknown>, write: ContinuationWrite): Promise<Session | null> {
  if (write === null || typeof write !== "object") {
    throw new InvalidInputError("continueSession needs { parentId, reason, ifLastMessageId, createSession, messages }.", { field: "write" });
  }
  const parentId = checkId(write.parentId, "parentId");
  const reason = checkId(write.reason, "reason");
  const ifLastMessageId = checkLastMessageId(write.ifLastMessageId, "ifLastMessageId");
  if (ifLastMessageId === undefined) {
    throw new InvalidInputError(
      "continueSession needs ifLastMessageId: the id of the parent's newest visible message when it was read (null when it has none).",
      { field: "ifLastMessageId" },
    );
  }
  if (!Array.isArray(write.messages)) throw new InvalidInputError("continueSession needs an array of messages.", { field: "messages" });
  const at = checkTime(write.at, "at", now());
  const input = checkNewSession({ ...write.createSession, parentSessionId: write.createSession?.parentSessionId ?? parentId });
  if (input.parentSessionId !== parentId) {
    throw new InvalidInputError("createSession.parentSessionId must be parentId (the child continues the session that ends).", {
      field: "createSession.parentSessionId",
    });
  }
  const prepared = prepareNewSession(input, at);
  const stored = write.messages.map((m, i) => d.storeMessage(normalizeMessage(m, `messages[${i}]`, at)));
  const fence = fenceOf(write);
  const guardMissed = new ConflictError("The session got a new message while it was being continued.");
  return d
    .write(
      `continuing session ${parentId}`,
      function* (): Steps<Session> {
        yield* checkFence(fence, d);
        const parent = yield* requireRow(d, parentId, true);
        if (parent.ended_at !== null) {
          throw new ConflictError(`Session "${parentId}" has ended; only a live session can be continued.`, { sessionId: parentId });
        }
        if (!(yield* lastMessageIs(d, parentId, ifLastMessageId))) throw guardMissed;
        yield* endSessionRow(d, parentId, reason, at);
        const child = yield* insertNewSession(d, input, prepared);
        if (stored.length > 0) yield* d.appendMessages(child.id, stored);
        return toSession(yield* requireRow(d, child.id), d.decodeText);
      },
      parentId,
    )
    .catch((error: unknown) => {
      if (error === guardMissed) return null;
      throw error;
    });
}
