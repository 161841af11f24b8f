/**
 * Contract: parent links, ancestors, descendants and the compression tip.
 *
 * @module
 */

import { expect } from "vitest";
import { NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject, ids } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

export function lineageTests(init: SessionDBTestInitializer): void {
  contractArea(init, "lineage", (test, { db }) => {
    test("getAncestors lists parent, grandparent, … up to the root", async () => {
      await db().createSession({ id: "root", source: "cli", startedAt: 1 });
      await db().createSession({ id: "a", source: "cli", parentSessionId: "root", startedAt: 2 });
      await db().createSession({ id: "b", source: "cli", parentSessionId: "a", startedAt: 3 });
      await db().createSession({ id: "c", source: "cli", parentSessionId: "b", startedAt: 4 });
      expect(ids(await db().getAncestors("c"))).toEqual(["b", "a", "root"]);
      expect(ids(await db().getAncestors("a"))).toEqual(["root"]);
      expect(await db().getAncestors("root")).toEqual([]);
      const [parent] = await db().getAncestors("c");
      expect(parent).toEqual(await db().getSession("b"));
    });

    test("getDescendants lists every descendant, breadth first", async () => {
      await db().createSession({ id: "root", source: "cli", startedAt: 1 });
      await db().createSession({ id: "a", source: "cli", parentSessionId: "root", startedAt: 2 });
      await db().createSession({ id: "b", source: "cli", parentSessionId: "root", startedAt: 3 });
      await db().createSession({ id: "a1", source: "cli", parentSessionId: "a", startedAt: 4 });
      await db().createSession({ id: "b1", source: "cli", parentSessionId: "b", startedAt: 5 });
      await db().createSession({ id: "a1x", source: "cli", parentSessionId: "a1", startedAt: 6 });
      await db().createSession({ id: "unrelated", source: "cli", startedAt: 7 });
      const got = ids(await db().getDescendants("root"));
      expect(got).toHaveLength(5);
      expect(new Set(got.slice(0, 2))).toEqual(new Set(["a", "b"]));
      expect(new Set(got.slice(2, 4))).toEqual(new Set(["a1", "b1"]));
      expect(got[4]).toBe("a1x");
      expect(ids(await db().getDescendants("a"))).toEqual(["a1", "a1x"]);
      expect(await db().getDescendants("a1x")).toEqual([]);
      const found = (await db().getDescendants("a")).find((s) => s.id === "a1");
      expect(found).toEqual(await db().getSession("a1"));
    });

    test("getCompressionTip follows compression-ended parents to the live end", async () => {
      await db().createSession({ id: "root", source: "cli", startedAt: 1 });
      await db().endSession("root", "compression", { endedAt: 2 });
      await db().createSession({ id: "mid", source: "cli", parentSessionId: "root", startedAt: 2 });
      await db().endSession("mid", "compression", { endedAt: 3 });
      await db().createSession({ id: "tip", source: "cli", parentSessionId: "mid", startedAt: 3 });
      expect(await db().getCompressionTip("root")).toBe("tip");
      expect(await db().getCompressionTip("mid")).toBe("tip");
      expect(await db().getCompressionTip("tip")).toBe("tip");
    });

    test("getCompressionTip picks the newest child when there are several", async () => {
      await db().createSession({ id: "root", source: "cli", startedAt: 1 });
      await db().endSession("root", "compression", { endedAt: 2 });
      await db().createSession({ id: "older", source: "cli", parentSessionId: "root", startedAt: 2 });
      await db().createSession({ id: "newer", source: "cli", parentSessionId: "root", startedAt: 5 });
      await db().createSession({ id: "middle", source: "cli", parentSessionId: "root", startedAt: 3 });
      expect(await db().getCompressionTip("root")).toBe("newer");
    });

    test("getCompressionTip does not follow other end reasons or live sessions", async () => {
      await db().createSession({ id: "live", source: "cli" });
      await db().createSession({ id: "live-child", source: "cli", parentSessionId: "live" });
      expect(await db().getCompressionTip("live")).toBe("live");

      await db().createSession({ id: "exited", source: "cli" });
      await db().endSession("exited", "user_exit");
      await db().createSession({ id: "branch", source: "cli", parentSessionId: "exited" });
      expect(await db().getCompressionTip("exited")).toBe("exited");

      await db().createSession({ id: "compressed-no-child", source: "cli" });
      await db().endSession("compressed-no-child", "compression");
      expect(await db().getCompressionTip("compressed-no-child")).toBe("compressed-no-child");

      // The chain stops at a child that ended for another reason.
      await db().createSession({ id: "r", source: "cli", startedAt: 1 });
      await db().endSession("r", "compression");
      await db().createSession({ id: "r1", source: "cli", parentSessionId: "r", startedAt: 2 });
      await db().endSession("r1", "user_exit");
      await db().createSession({ id: "r2", source: "cli", parentSessionId: "r1", startedAt: 3 });
      expect(await db().getCompressionTip("r")).toBe("r1");
    });

    test("lineage calls on an unknown session are NotFoundErrors", async () => {
      await expectReject(() => db().getAncestors("ghost"), NotFoundError);
      await expectReject(() => db().getDescendants("ghost"), NotFoundError);
      await expectReject(() => db().getCompressionTip("ghost"), NotFoundError);
    });
  });
}
