/**
 * Contract: execution sessions — atomic, version-checked puts and cascading deletes,
 * lookups by id prefix, base and parent (leaving out the steps of matching workflows),
 * paged listing with kept totals, and retention units aged by their newest member.
 *
 * @module
 */

import { expect } from "vitest";
import type { ExecutionWrite } from "../../../src/store/contract.js";
import { InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;

function agent(id: string, overrides: Partial<ExecutionWrite> = {}): ExecutionWrite {
  return {
    id,
    kind: "agent",
    name: "researcher",
    baseId: id,
    updatedAt: T0,
    result: { status: "completed", messages: [{ role: "user", content: "hi" }] },
    messageCount: 1,
    agentsInvolved: null,
    ...overrides,
  };
}

function workflow(id: string, overrides: Partial<ExecutionWrite> = {}): ExecutionWrite {
  return {
    id,
    kind: "workflow",
    name: "pipeline",
    baseId: id,
    updatedAt: T0,
    result: { status: "completed", steps: [] },
    messageCount: 0,
    agentsInvolved: null,
    ...overrides,
  };
}

function step(workflowId: string, suffix: string | number, baseId: string, overrides: Partial<ExecutionWrite> = {}): ExecutionWrite {
  return agent(`${workflowId}-${suffix}`, { baseId, parentId: workflowId, ...overrides });
}

const ids = (items: ReadonlyArray<{ id: string }>): string[] => items.map((i) => i.id);

export function executionsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "executions", (test, { db }) => {
    test("a put round-trips every field; getExecution of an unknown id is null", async () => {
      const result = {
        status: "failed",
        text: "naïve 東京 🎉 and a NUL \u0000 inside",
        nested: { list: [1, 2.5, null, true], empty: {} },
      };
      const written = await db().writeExecutions({
        put: [agent("agent-0001", { result, userId: "u1", createdAt: T0 - 10, updatedAt: T0, messageCount: 7, agentsInvolved: null })],
      });
      expect(written?.deleted).toEqual([]);
      const expected = {
        id: "agent-0001",
        kind: "agent",
        name: "researcher",
        baseId: "agent-0001",
        parentId: null,
        userId: "u1",
        createdAt: T0 - 10,
        updatedAt: T0,
        unitUpdatedAt: T0,
        messageCount: 7,
        agentsInvolved: null,
        version: 1,
      };
      expect(written?.stored).toEqual([expected]);
      expect(await db().getExecution("agent-0001")).toEqual({ ...expected, result });
      expect(await db().getExecution("agent-0002")).toBeNull();
    });

    test("a second put replaces the record but keeps its creation time; the version grows", async () => {
      await db().writeExecutions({ put: [agent("agent-a", { updatedAt: T0 })] });
      const second = await db().writeExecutions({
        put: [agent("agent-a", { name: "writer", createdAt: T0 + 999, updatedAt: T0 + 5, result: [1], messageCount: 0 })],
      });
      expect(second?.stored[0]).toMatchObject({ name: "writer", createdAt: T0, updatedAt: T0 + 5, version: 2, messageCount: 0 });
      expect((await db().getExecution("agent-a"))?.result).toEqual([1]);
    });

    test("expectedVersion: a failed expectation writes nothing of the whole change", async () => {
      await db().writeExecutions({ put: [agent("agent-a")] });
      expect(await db().writeExecutions({ put: [agent("agent-a", { expectedVersion: null })] })).toBeNull();
      expect(
        await db().writeExecutions({ put: [agent("agent-b", { expectedVersion: null }), agent("agent-a", { name: "x", expectedVersion: 2 })] }),
      ).toBeNull();
      expect(await db().getExecution("agent-b")).toBeNull();
      expect((await db().getExecution("agent-a"))?.name).toBe("researcher");
      expect(await db().writeExecutions({ put: [agent("agent-c", { expectedVersion: 1 })] })).toBeNull();
      const ok = await db().writeExecutions({ put: [agent("agent-a", { name: "x", expectedVersion: 1 }), agent("agent-b", { expectedVersion: null })] });
      expect(ok?.stored.map((s) => [s.id, s.version])).toEqual([
        ["agent-a", 2],
        ["agent-b", 1],
      ]);
    });

    test("a step needs an existing top-level workflow as parent", async () => {
      await expectReject(() => db().writeExecutions({ put: [step("workflow-w", 0, "w")] }), NotFoundError);
      await db().writeExecutions({ put: [agent("agent-a"), workflow("workflow-w", { baseId: "w" })] });
      await expectReject(() => db().writeExecutions({ put: [agent("agent-a-0", { parentId: "agent-a" })] }), InvalidInputError);
      // A workflow and its steps in one change: the workflow first.
      await db().writeExecutions({ put: [workflow("workflow-v", { baseId: "v" }), step("workflow-v", 0, "v")] });
      expect((await db().getExecution("workflow-v-0"))?.parentId).toBe("workflow-v");
      await expectReject(() => db().writeExecutions({ put: [agent("agent-b", { parentId: "workflow-v-0" })] }), InvalidInputError);
      const bad = await expectReject(() => db().writeExecutions({ put: [workflow("workflow-x", { parentId: "workflow-w" })] }), InvalidInputError);
      expect(bad.field).toBe("put[0].kind");
      // A workflow with steps stays a top-level workflow.
      await expectReject(() => db().writeExecutions({ put: [agent("workflow-v")] }), InvalidInputError);
      expect((await db().getExecution("workflow-v"))?.kind).toBe("workflow");
    });

    test("invalid writes are refused before anything is stored", async () => {
      const cyclic: Record<string, unknown> = {};
      cyclic["self"] = cyclic;
      const cases: Array<[Partial<ExecutionWrite>, string]> = [
        [{ kind: "robot" as never }, "put[0].kind"],
        [{ messageCount: -1 }, "put[0].messageCount"],
        [{ messageCount: 1.5 }, "put[0].messageCount"],
        [{ result: cyclic }, "put[0].result"],
        [{ result: undefined }, "put[0].result"],
        [{ name: "" }, "put[0].name"],
        [{ id: "bad\nid" }, "put[0].id"],
        [{ agentsInvolved: { "agent-x-0": 5 as never } }, "put[0].agentsInvolved"],
        [{ expectedVersion: 0 }, "put[0].expectedVersion"],
        [{ updatedAt: Number.NaN }, "put[0].updatedAt"],
      ];
      for (const [overrides, field] of cases) {
        const error = await expectReject(() => db().writeExecutions({ put: [agent("agent-a", overrides)] }), InvalidInputError);
        expect(error.field, Object.keys(overrides).join()).toBe(field);
      }
      await expectReject(() => db().writeExecutions({ put: [agent("agent-a"), agent("agent-a")] }), InvalidInputError);
      expect(await db().getExecution("agent-a")).toBeNull();
      expect((await db().listExecutions()).total).toBe(0);
    });

    test("deleting a workflow takes exactly its steps; an agent run sharing the base survives", async () => {
      await db().writeExecutions({
        put: [
          workflow("workflow-job", { baseId: "job" }),
          step("workflow-job", 0, "job"),
          step("workflow-job", 10, "job"),
          step("workflow-job", "plan", "job"),
          agent("agent-job", { baseId: "job" }),
          workflow("workflow-jobs", { baseId: "jobs" }),
          step("workflow-jobs", 0, "jobs"),
        ],
      });
      const result = await db().writeExecutions({ delete: ["workflow-job"] });
      expect(result?.deleted).toEqual(["workflow-job", "workflow-job-0", "workflow-job-10", "workflow-job-plan"]);
      expect(await db().getExecution("agent-job")).not.toBeNull();
      expect(await db().getExecution("workflow-jobs-0")).not.toBeNull();
      expect((await db().listExecutions()).total).toBe(3);
      expect(await db().writeExecutions({ delete: ["workflow-job", "nothing"] })).toEqual({ stored: [], deleted: [] });
    });

    test("deleting a step leaves its workflow and the other steps", async () => {
      await db().writeExecutions({ put: [workflow("workflow-w", { baseId: "w" }), step("workflow-w", 0, "w"), step("workflow-w", 1, "w")] });
      expect((await db().writeExecutions({ delete: ["workflow-w-1"] }))?.deleted).toEqual(["workflow-w-1"]);
      expect(ids(await db().findExecutions({ parentId: "workflow-w" }))).toEqual(["workflow-w-0"]);
      expect(await db().getExecution("workflow-w")).not.toBeNull();
    });

    test("findExecutions by prefix, base and parent, in id order; steps of matching workflows can be left out", async () => {
      await db().writeExecutions({
        put: [
          workflow("workflow-abc", { baseId: "abc" }),
          step("workflow-abc", 0, "abc"),
          step("workflow-abc", 1, "abc"),
          step("workflow-abc", 10, "abc"),
          step("workflow-abc", "write-report", "abc"),
          agent("agent-abc", { baseId: "abc" }),
          agent("agent-abd"),
        ],
      });
      expect(ids(await db().findExecutions({ idPrefix: "workflow-ab" }))).toEqual([
        "workflow-abc",
        "workflow-abc-0",
        "workflow-abc-1",
        "workflow-abc-10",
        "workflow-abc-write-report",
      ]);
      expect(ids(await db().findExecutions({ idPrefix: "workflow-ab", withoutStepsOfMatches: true }))).toEqual(["workflow-abc"]);
      // The workflow itself does not match "workflow-abc-1": both its steps are primary matches.
      expect(ids(await db().findExecutions({ idPrefix: "workflow-abc-1", withoutStepsOfMatches: true }))).toEqual(["workflow-abc-1", "workflow-abc-10"]);
      expect(ids(await db().findExecutions({ baseId: "abc", withoutStepsOfMatches: true }))).toEqual(["agent-abc", "workflow-abc"]);
      expect(ids(await db().findExecutions({ baseId: "abc" }))).toHaveLength(6);
      expect(ids(await db().findExecutions({ parentId: "workflow-abc", limit: 2 }))).toEqual(["workflow-abc-0", "workflow-abc-1"]);
      expect(ids(await db().findExecutions({ idPrefix: "agent-ab", limit: 1 }))).toEqual(["agent-abc"]);
      expect(await db().findExecutions({ idPrefix: "zzz" })).toEqual([]);
      await expectReject(() => db().findExecutions({}), InvalidInputError);
      await expectReject(() => db().findExecutions({ idPrefix: "a", baseId: "b" }), InvalidInputError);
      await expectReject(() => db().findExecutions({ idPrefix: "a", limit: 0 }), InvalidInputError);
    });

    test("a prefix range includes ids with characters beyond the BMP and nothing else", async () => {
      await db().writeExecutions({ put: [agent("agent-x😀1"), agent("agent-x\u{10FFFD}"), agent("agent-y"), agent("agent-x")] });
      expect(ids(await db().findExecutions({ idPrefix: "agent-x" }))).toEqual(["agent-x", "agent-x😀1", "agent-x\u{10FFFD}"]);
    });

    test("listExecutions: newest first, filters, paging and kept totals", async () => {
      await db().writeExecutions({
        put: [
          agent("agent-1", { name: "researcher", updatedAt: T0 + 1 }),
          agent("agent-2", { name: "writer", updatedAt: T0 + 2 }),
          agent("agent-3", { name: "researcher", updatedAt: T0 + 3, userId: "u1" }),
          workflow("workflow-w", { baseId: "w", updatedAt: T0 + 4 }),
          step("workflow-w", 0, "w", { name: "researcher", updatedAt: T0 + 5 }),
          step("workflow-w", 1, "w", { name: "writer", updatedAt: T0 + 5 }),
        ],
      });
      const all = await db().listExecutions();
      expect(ids(all.items)).toEqual(["workflow-w-1", "workflow-w-0", "workflow-w", "agent-3", "agent-2", "agent-1"]);
      expect(all.total).toBe(6);
      const direct = await db().listExecutions({ directOnly: true });
      expect([ids(direct.items), direct.total]).toEqual([["workflow-w", "agent-3", "agent-2", "agent-1"], 4]);
      const researcher = await db().listExecutions({ kind: "agent", name: "researcher", directOnly: true });
      expect([ids(researcher.items), researcher.total]).toEqual([["agent-3", "agent-1"], 2]);
      const withSteps = await db().listExecutions({ kind: "agent", name: "researcher" });
      expect([ids(withSteps.items), withSteps.total]).toEqual([["workflow-w-0", "agent-3", "agent-1"], 3]);
      expect((await db().listExecutions({ kind: "workflow", name: "pipeline" })).total).toBe(1);
      expect((await db().listExecutions({ kind: "workflow", name: "researcher" })).total).toBe(0);
      const mine = await db().listExecutions({ userId: "u1" });
      expect([ids(mine.items), mine.total]).toEqual([["agent-3"], 1]);
      const page2 = await db().listExecutions({ limit: 2, offset: 2 });
      expect([ids(page2.items), page2.total]).toEqual([["workflow-w", "agent-3"], 6]);
      const page2direct = await db().listExecutions({ directOnly: true, limit: 2, offset: 2 });
      expect(ids(page2direct.items)).toEqual(["agent-2", "agent-1"]);
      expect((await db().listExecutions({ offset: 10 })).items).toEqual([]);

      // Totals follow renames, moves between owners and deletions.
      await db().writeExecutions({ put: [agent("agent-1", { name: "writer", userId: "u1", updatedAt: T0 + 1 })] });
      expect((await db().listExecutions({ kind: "agent", name: "researcher", directOnly: true })).total).toBe(1);
      expect((await db().listExecutions({ kind: "agent", name: "writer", directOnly: true, userId: "u1" })).total).toBe(1);
      await db().writeExecutions({ delete: ["workflow-w"] });
      expect((await db().listExecutions()).total).toBe(3);
      expect((await db().listExecutions({ kind: "agent", name: "writer" })).total).toBe(2);
    });

    test("listExecutions pages by cursor: every record once, newest first, across runs and steps", async () => {
      const put = [];
      for (let i = 0; i < 5; i++) put.push(agent(`agent-${i}`, { updatedAt: T0 + (i % 3) })); // ties on updatedAt go by id
      put.push(workflow("workflow-w", { baseId: "w", updatedAt: T0 + 1 }));
      put.push(step("workflow-w", 0, "w", { updatedAt: T0 + 2 }), step("workflow-w", 1, "w", { updatedAt: T0 }));
      await db().writeExecutions({ put });
      const everything = ids((await db().listExecutions({ limit: 100 })).items);
      expect(everything).toHaveLength(8);
      for (const directOnly of [false, true]) {
        const expected = directOnly ? everything.filter((id) => !/^workflow-w-\d$/u.test(id)) : everything;
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await db().listExecutions({ directOnly, limit: 3, cursor });
          expect(page.total).toBe(expected.length);
          seen.push(...ids(page.items));
          cursor = page.nextCursor;
          pages += 1;
        } while (cursor !== null);
        expect(seen).toEqual(expected);
        expect(pages).toBe(Math.ceil(expected.length / 3));
      }
      // The last page that ends exactly at the end has no cursor.
      expect((await db().listExecutions({ limit: 8 })).nextCursor).toBeNull();
      expect((await db().listExecutions({ limit: 7 })).nextCursor).not.toBeNull();

      // A record rewritten between pages moves to the top; the others are neither repeated nor skipped.
      const first = await db().listExecutions({ limit: 3 });
      const moved = everything[5]!;
      const record = (await db().getExecution(moved))!;
      const { id, kind, name, baseId, parentId, userId, result, messageCount, agentsInvolved, version } = record;
      await db().writeExecutions({
        put: [{ id, kind, name, baseId, parentId, userId, result, messageCount, agentsInvolved, updatedAt: T0 + 100, expectedVersion: version }],
      });
      const rest: string[] = [];
      for (let cursor = first.nextCursor; cursor !== null; ) {
        const page = await db().listExecutions({ limit: 3, cursor });
        rest.push(...ids(page.items));
        cursor = page.nextCursor;
      }
      expect(rest).toEqual(everything.slice(3).filter((id) => id !== moved));

      // An offset counts from the cursor.
      const after = await db().listExecutions({ limit: 2, offset: 1, cursor: first.nextCursor });
      expect(ids(after.items)).toEqual(
        everything
          .slice(3)
          .filter((id) => id !== moved)
          .slice(1, 3),
      );
    });

    test("listExecutions validates its options", async () => {
      for (const options of [{ limit: 0 }, { limit: 101 }, { limit: 2.5 }, { offset: -1 }, { kind: "agent" as const }, { name: "x" }, { userId: "" }]) {
        await expectReject(() => db().listExecutions(options), InvalidInputError);
      }
      expect((await db().listExecutions({ limit: 100 })).items).toEqual([]);
      await expectReject(() => db().listExecutions({ cursor: "not a cursor!" }), InvalidInputError, /cursor/);
      await db().createSession({ id: "s-1", source: "cli" });
      await db().createSession({ id: "s-2", source: "cli" });
      const sessionsCursor = (await db().listSessions({ limit: 1 })).nextCursor!;
      await expectReject(() => db().listExecutions({ cursor: sessionsCursor }), InvalidInputError, /cursor/);
    });

    test("listExecutionUnits: units aged by their newest member, recomputed when a member goes", async () => {
      await db().writeExecutions({
        put: [
          agent("agent-old", { updatedAt: T0 + 1 }),
          workflow("workflow-w", { baseId: "w", updatedAt: T0 + 2 }),
          step("workflow-w", 0, "w", { updatedAt: T0 + 3 }),
          step("workflow-w", 1, "w", { updatedAt: T0 + 9 }),
          agent("agent-new", { updatedAt: T0 + 5, userId: "u1" }),
        ],
      });
      let units = await db().listExecutionUnits();
      expect(units.map((u) => [u.id, u.unitUpdatedAt])).toEqual([
        ["workflow-w", T0 + 9],
        ["agent-new", T0 + 5],
        ["agent-old", T0 + 1],
      ]);
      expect(ids(await db().listExecutionUnits({ offset: 1, limit: 1 }))).toEqual(["agent-new"]);
      expect(ids(await db().listExecutionUnits({ updatedBefore: T0 + 5 }))).toEqual(["agent-old"]);
      expect(ids(await db().listExecutionUnits({ userId: "u1" }))).toEqual(["agent-new"]);
      await db().writeExecutions({ delete: ["workflow-w-1"] });
      units = await db().listExecutionUnits();
      expect(units.map((u) => [u.id, u.unitUpdatedAt])).toEqual([
        ["agent-new", T0 + 5],
        ["workflow-w", T0 + 3],
        ["agent-old", T0 + 1],
      ]);
      // A later put of the workflow itself moves its unit.
      await db().writeExecutions({ put: [workflow("workflow-w", { baseId: "w", updatedAt: T0 + 20 })] });
      expect((await db().listExecutionUnits({ limit: 1 }))[0]).toMatchObject({ id: "workflow-w", unitUpdatedAt: T0 + 20 });
      await expectReject(() => db().listExecutionUnits({ limit: 1001 }), InvalidInputError);
    });

    test("concurrent writers of one record: each expectation holds for exactly one of them", async () => {
      await db().writeExecutions({ put: [agent("agent-a")] });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => db().writeExecutions({ put: [agent("agent-a", { name: `n${i}`, expectedVersion: 1 })] })),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect((await db().getExecution("agent-a"))?.version).toBe(2);
      const creates = await Promise.all(Array.from({ length: 6 }, () => db().writeExecutions({ put: [agent("agent-new", { expectedVersion: null })] })));
      expect(creates.filter((r) => r !== null)).toHaveLength(1);
      expect((await db().listExecutions()).total).toBe(2);
    });
  });
}
