/**
 * Contract: token and cost accounting (`recordUsage`), as deltas or absolute values.
 *
 * @module
 */

import { expect } from "vitest";
import { NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

export function usageTests(init: SessionDBTestInitializer): void {
  contractArea(init, "usage", (test, { db }) => {
    test("delta (the default) adds numeric fields and sets text fields", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const first = await db().recordUsage("s", {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 5,
        cacheWriteTokens: 7,
        reasoningTokens: 3,
        apiCalls: 1,
        estimatedCostUsd: 0.25,
        billingProvider: "openrouter",
        billingMode: "metered",
        costStatus: "estimated",
      });
      expect(first).toEqual({
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 5,
        cacheWriteTokens: 7,
        reasoningTokens: 3,
        apiCalls: 1,
        estimatedCostUsd: 0.25,
        actualCostUsd: null,
        billingProvider: "openrouter",
        billingMode: "metered",
        costStatus: "estimated",
      });
      const second = await db().recordUsage(
        "s",
        { inputTokens: 50, outputTokens: 30, apiCalls: 1, estimatedCostUsd: 0.5, actualCostUsd: 0.7, costStatus: "final" },
        { mode: "delta" },
      );
      expect(second.inputTokens).toBe(150);
      expect(second.outputTokens).toBe(50);
      expect(second.cacheReadTokens).toBe(5);
      expect(second.cacheWriteTokens).toBe(7);
      expect(second.reasoningTokens).toBe(3);
      expect(second.apiCalls).toBe(2);
      expect(second.estimatedCostUsd).toBeCloseTo(0.75, 10);
      expect(second.actualCostUsd).toBeCloseTo(0.7, 10);
      expect(second.billingProvider).toBe("openrouter");
      expect(second.billingMode).toBe("metered");
      expect(second.costStatus).toBe("final");
      expect((await db().getSession("s"))?.usage).toEqual(second);

      const third = await db().recordUsage("s", { actualCostUsd: 0.3 });
      expect(third.actualCostUsd).toBeCloseTo(1.0, 10);
    });

    test("absolute sets the given numeric fields and keeps the others", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().recordUsage("s", { inputTokens: 100, outputTokens: 40, apiCalls: 3, estimatedCostUsd: 1.5 });
      const set = await db().recordUsage(
        "s",
        { inputTokens: 7, apiCalls: 1, estimatedCostUsd: 0.1, actualCostUsd: 0.2, billingMode: "subscription" },
        { mode: "absolute" },
      );
      expect(set.inputTokens).toBe(7);
      expect(set.apiCalls).toBe(1);
      expect(set.estimatedCostUsd).toBeCloseTo(0.1, 10);
      expect(set.actualCostUsd).toBeCloseTo(0.2, 10);
      expect(set.billingMode).toBe("subscription");
      expect(set.outputTokens).toBe(40);
      expect((await db().getSession("s"))?.usage).toEqual(set);
      // A later delta adds on top of the absolute values.
      const after = await db().recordUsage("s", { inputTokens: 3 });
      expect(after.inputTokens).toBe(10);
    });

    test("usage of one session does not leak into another", async () => {
      await db().createSession({ id: "a", source: "cli" });
      await db().createSession({ id: "b", source: "cli" });
      await db().recordUsage("a", { inputTokens: 10 });
      expect((await db().getSession("b"))?.usage.inputTokens).toBe(0);
    });

    test("concurrent deltas are all counted", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await Promise.all(Array.from({ length: 50 }, () => db().recordUsage("s", { inputTokens: 2, apiCalls: 1 })));
      const usage = (await db().getSession("s"))?.usage;
      expect(usage?.inputTokens).toBe(100);
      expect(usage?.apiCalls).toBe(50);
    });

    test("recordUsage of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().recordUsage("ghost", { inputTokens: 1 }), NotFoundError);
    });
  });
}
