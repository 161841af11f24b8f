/**
 * The executions library on both backends: save/read/metadata, id prefixing, resolution
 * (the `-10`, graph-node and shared-base cases must not be ambiguous), listing, exact
 * cascades, retention by units, import of a hand-built directory, owner scoping.
 */
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { AmbiguousIdError, ConflictError, InvalidInputError, NotFoundError, type SessionDB } from "../../src/index.js";
import { Executions, type WorkflowRunResult } from "../../src/executions/index.js";
import { expectReject } from "../contract/harness.js";
import { forEachBackend, type TestDatabase } from "../gateway/backends.js";

const T0 = 1_800_000_000;
const DAY = 86_400;
const FIXTURES = fileURLToPath(new URL("./fixtures/history", import.meta.url));

const msg = (role: string, content: string) => ({ role, content });

/** An Executions on a fresh database with a clock the test moves. */
async function setup(fresh: () => Promise<TestDatabase>): Promise<{
  ex: Executions;
  db: SessionDB;
  clock: { now: number };
  tdb: TestDatabase;
}> {
  const tdb = await fresh();
  const clock = { now: T0 };
  return { ex: new Executions(tdb.db, { clock: () => clock.now }), db: tdb.db, clock, tdb };
}

function threeSteps(): WorkflowRunResult {
  return {
    status: "completed",
    finalResponse: "done",
    steps: [
      { agentName: "fetcher", messages: [msg("user", "fetch"), msg("assistant", "fetched")] },
      { agentName: "summarizer", messages: [msg("assistant", "summary")] },
      { agentName: "reviewer", messages: [msg("assistant", "ok"), msg("user", "thanks"), msg("assistant", "bye")] },
    ],
  };
}

forEachBackend((backend) => {
  // --- save, read, metadata ---------------------------------------------------

  it("saveAgentResult without an id: agent-<8 hex>, its own base, a default name, derived count", async () => {
    const { ex } = await setup(backend.fresh);
    const meta = await ex.saveAgentResult({ finalResponse: "4", messages: [msg("user", "2+2?"), msg("assistant", "4")] });
    expect(meta.id).toMatch(/^agent-[0-9a-f]{8}$/);
    expect(meta).toEqual({
      id: meta.id,
      kind: "agent",
      name: `Untitled Agent (${meta.id.slice(0, 8)})`, // agent-1f…: the first 8 of the id as given
      baseId: meta.id,
      parentId: null,
      userId: null,
      createdAt: T0,
      updatedAt: T0,
      messageCount: 2,
      agentsInvolved: null,
    });
    expect(await ex.getSessionMetadata(meta.id)).toEqual(meta);
    expect(await ex.getSessionResult(meta.id)).toEqual({
      status: "completed",
      finalResponse: "4",
      messages: [msg("user", "2+2?"), msg("assistant", "4")],
      error: null,
    });
    expect(await ex.getSessionHistory(meta.id)).toEqual([msg("user", "2+2?"), msg("assistant", "4")]);
    const workflow = await ex.saveWorkflowResult({ steps: [] });
    expect(workflow.id).toMatch(/^workflow-[0-9a-f]{8}$/);
    expect(workflow.name).toBe("Untitled Workflow (workflow)");
  });

  it("a given id gets its prefix (base = the given id); prefixed ids are kept; load and save use the same id", async () => {
    const { ex, clock } = await setup(backend.fresh);
    const first = await ex.saveAgentResult({ messages: [msg("user", "a")] }, { sessionId: "run42", name: "helper" });
    expect([first.id, first.baseId, first.name]).toEqual(["agent-run42", "run42", "helper"]);
    expect((await ex.saveAgentResult({}, { sessionId: "agent-x1" })).baseId).toBe("agent-x1");
    expect((await ex.saveWorkflowResult({}, { sessionId: "nightly" })).id).toBe("workflow-nightly");
    expect((await ex.saveWorkflowResult({}, { sessionId: "workflow-abc" })).baseId).toBe("workflow-abc");

    clock.now = T0 + 60;
    // Appending by the user-given id lands in the same record, never in a second one.
    const appended = await ex.addMessageToHistory("run42", msg("assistant", "b"));
    expect([appended.id, appended.messageCount, appended.createdAt, appended.updatedAt]).toEqual(["agent-run42", 2, T0, T0 + 60]);
    const again = await ex.saveAgentResult({ messages: [msg("user", "c")] }, { sessionId: "run42" });
    expect([again.id, again.name, again.createdAt, again.messageCount]).toEqual(["agent-run42", "helper", T0, 1]);
    expect((await ex.listSessions()).total).toBe(4);
  });

  it("saveWorkflowResult stores each step as <workflow>-<i> with the workflow's base; history in step order", async () => {
    const { ex, db } = await setup(backend.fresh);
    const meta = await ex.saveWorkflowResult(threeSteps(), { sessionId: "report", name: "daily-report" });
    expect(meta).toMatchObject({
      id: "workflow-report",
      kind: "workflow",
      name: "daily-report",
      baseId: "report",
      messageCount: 6,
      agentsInvolved: { "workflow-report-0": "fetcher", "workflow-report-1": "summarizer", "workflow-report-2": "reviewer" },
    });
    const step1 = await ex.getSessionMetadata("workflow-report-1");
    expect(step1).toMatchObject({ kind: "agent", name: "summarizer", baseId: "report", parentId: "workflow-report", messageCount: 1 });
    expect(await ex.getSessionHistory("workflow-report-1")).toEqual([msg("assistant", "summary")]);
    expect((await ex.getSessionHistory("workflow-report")).map((m) => (m as { content: string }).content)).toEqual([
      "fetch",
      "fetched",
      "summary",
      "ok",
      "thanks",
      "bye",
    ]);
    const result = (await ex.getSessionResult("workflow-report")) as { steps: Array<{ sessionId: string; index: number }> };
    expect(result.steps.map((s) => [s.sessionId, s.index])).toEqual([
      ["workflow-report-0", 0],
      ["workflow-report-1", 1],
      ["workflow-report-2", 2],
    ]);
    expect((await db.findExecutions({ parentId: "workflow-report" })).length).toBe(3);
  });

  it("a graph workflow keeps node order (dashes and integer-like names included)", async () => {
    const { ex } = await setup(backend.fresh);
    const meta = await ex.saveWorkflowResult(
      {
        nodes: [
          { node: "plan", agentName: "planner", messages: [msg("assistant", "1")] },
          { node: "10", agentName: "ten", messages: [msg("assistant", "2")] },
          { node: "write-report", agentName: "writer", messages: [msg("assistant", "3")] },
          { node: "2", agentName: "two", messages: [msg("assistant", "4")] },
        ],
      },
      { sessionId: "graph" },
    );
    expect(Object.keys(meta.agentsInvolved!)).toEqual(["workflow-graph-plan", "workflow-graph-10", "workflow-graph-write-report", "workflow-graph-2"]);
    expect((await ex.getSessionHistory("workflow-graph")).map((m) => (m as { content: string }).content)).toEqual(["1", "2", "3", "4"]);
    expect((await ex.getSessionMetadata("workflow-graph-write-report")).parentId).toBe("workflow-graph");
    await expectReject(() => ex.saveWorkflowResult({ steps: [{}], nodes: [{ node: "0" }] }, { sessionId: "clash" }), InvalidInputError);
    await expectReject(() => ex.saveWorkflowResult({ nodes: [{ node: "" }] }), InvalidInputError);
  });

  it("addMessageToHistory: an unknown id creates an agent session; a workflow is refused; a step updates its workflow", async () => {
    const { ex, clock } = await setup(backend.fresh);
    const created = await ex.addMessageToHistory("fresh", msg("user", "hi"), { name: "greeter" });
    expect(created).toMatchObject({ id: "agent-fresh", kind: "agent", baseId: "fresh", name: "greeter", messageCount: 1 });
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "wf" });
    const refused = await expectReject(() => ex.addMessageToHistory("workflow-wf", msg("user", "x")), ConflictError, /workflow/);
    expect(refused.sessionId).toBe("workflow-wf");
    expect((await ex.getSessionMetadata("workflow-wf")).kind).toBe("workflow");

    clock.now = T0 + 30;
    const step = await ex.addMessageToHistory("workflow-wf-1", msg("user", "more"));
    expect(step.messageCount).toBe(2);
    const parent = await ex.getSessionMetadata("workflow-wf");
    expect([parent.messageCount, parent.updatedAt]).toEqual([7, T0 + 30]);
    expect((await ex.getSessionHistory("workflow-wf")).map((m) => (m as { content: string }).content)).toContain("more");
    // A new step id of an existing workflow joins it (base and parent), and the workflow is left alone.
    const late = await ex.addMessageToHistory("workflow-wf-3", msg("assistant", "late"));
    expect([late.baseId, late.parentId]).toEqual(["wf", "workflow-wf"]);
    await expectReject(() => ex.addMessageToHistory("x", null as never), InvalidInputError);
  });

  it("a result holding exceptions, cycles, BigInts and throwing getters is saved whole and survives a reopen", async () => {
    const { ex, tdb } = await setup(backend.fresh);
    const cause = new TypeError("socket closed");
    const error = Object.assign(new Error("model call failed", { cause }), { code: "E_MODEL", attempts: 3n });
    const cyclic: Record<string, unknown> = { label: "loop" };
    cyclic["self"] = cyclic;
    const hostile = {
      get boom(): never {
        throw new Error("getter exploded");
      },
      toJSONLater: () => 1,
    };
    const meta = await ex.saveAgentResult({
      error,
      messages: [msg("user", "hi"), { role: "assistant", content: "lone \ud800 surrogate", big: 2n ** 70n }],
      context: { cyclic, hostile, badDate: new Date(Number.NaN), when: new Date(0), nan: Number.NaN, skip: undefined },
    });
    expect(meta.messageCount).toBe(2);
    const reopened = new Executions(await tdb.reopen());
    const result = (await reopened.getSessionResult(meta.id)) as Record<string, any>;
    expect(result["status"]).toBe("failed");
    expect(result["error"]).toEqual({
      name: "Error",
      message: "model call failed",
      code: "E_MODEL",
      attempts: "3",
      cause: { name: "TypeError", message: "socket closed" },
    });
    expect(result["messages"][1]).toEqual({ role: "assistant", content: "lone \ufffd surrogate", big: "1180591620717411303424" });
    expect(result["context"]).toEqual({
      cyclic: { label: "loop", self: "[Circular]" },
      hostile: { boom: "[Unserializable: getter exploded]" },
      badDate: null,
      when: "1970-01-01T00:00:00.000Z",
      nan: null,
    });
  });

  it("concurrent appends to one session (and its workflow) lose no message", async () => {
    const { ex, tdb } = await setup(backend.fresh);
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "busy" });
    const other = new Executions(await tdb.reopen());
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? ex : other).addMessageToHistory("workflow-busy-1", msg("user", `m${i}`))));
    expect((await ex.getSessionMetadata("workflow-busy-1")).messageCount).toBe(13);
    expect((await ex.getSessionMetadata("workflow-busy")).messageCount).toBe(6 + 12);
    const contents = (await ex.getSessionHistory("workflow-busy-1")).map((m) => (m as { content: string }).content);
    expect(contents.slice(1).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`).sort());
  });

  // --- resolution ---------------------------------------------------------------

  it("resolution: exact id, then a unique prefix, then the base; the steps of a match never make it ambiguous", async () => {
    const { ex } = await setup(backend.fresh);
    const steps = Array.from({ length: 11 }, (_, i) => ({ agentName: `a${i}`, messages: [msg("user", String(i))] }));
    await ex.saveWorkflowResult({ steps }, { sessionId: "job" });
    // `-1` and `-10` both exist: the exact id wins, the prefix of both is the workflow.
    expect(await ex.resolveSessionId("workflow-job-1")).toBe("workflow-job-1");
    expect(await ex.resolveSessionId("workflow-job-10")).toBe("workflow-job-10");
    expect(await ex.resolveSessionId("workflow-jo")).toBe("workflow-job");
    expect(await ex.resolveSessionId("job")).toBe("workflow-job");
    expect(await ex.getSessionHistory("job")).toHaveLength(11);
    // A step prefix shared by `-1` and `-10` (the workflow does not match it) is really ambiguous.
    await expectReject(() => ex.resolveSessionId("workflow-job-"), AmbiguousIdError);

    // Graph nodes with dashes in their names.
    await ex.saveWorkflowResult({ nodes: [{ node: "plan" }, { node: "write-report" }, { node: "write-report-2" }] }, { sessionId: "graph" });
    expect(await ex.resolveSessionId("graph")).toBe("workflow-graph");
    expect(await ex.resolveSessionId("workflow-gr")).toBe("workflow-graph");
    expect(await ex.resolveSessionId("workflow-graph-write-report")).toBe("workflow-graph-write-report");

    await expectReject(() => ex.resolveSessionId("nothing-here"), NotFoundError, /^Session 'nothing-here' not found$/);
  });

  it("resolution: an agent run and a workflow run sharing a base resolve to the most recently updated", async () => {
    const { ex, clock } = await setup(backend.fresh);
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "shared" });
    clock.now = T0 + 10;
    await ex.saveAgentResult({ messages: [] }, { sessionId: "shared" });
    expect(await ex.resolveSessionId("shared")).toBe("agent-shared");
    clock.now = T0 + 20;
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "shared" });
    expect(await ex.resolveSessionId("shared")).toBe("workflow-shared");
    // A third run on the base makes it ambiguous: the candidates are listed.
    await ex.saveAgentResult({}, { sessionId: "agent-other" });
    await ex.saveAgentResult({}, { sessionId: "agent-shared2" });
    const error = await expectReject(() => ex.resolveSessionId("agent-sh"), AmbiguousIdError);
    expect(error.code).toBe("TL_ERR_AMBIGUOUS_ID");
    expect(error.candidates.map((c) => c.id)).toEqual(["agent-shared", "agent-shared2"]);
  });

  it("ambiguity lists at most 5 candidates and says when there are more", async () => {
    const { ex } = await setup(backend.fresh);
    for (let i = 0; i < 7; i++) await ex.saveAgentResult({}, { sessionId: `batch-${i}` });
    const error = await expectReject(() => ex.resolveSessionId("agent-batch"), AmbiguousIdError, /and more/);
    expect(error.candidates).toHaveLength(5);
    expect(error.more).toBe(true);
    expect(error.candidates[0]).toMatchObject({ id: "agent-batch-0", kind: "agent", updatedAt: T0 });
  });

  // --- listing ------------------------------------------------------------------

  it("listing: by agent name (direct runs only), by workflow name, newest first, paged with a total", async () => {
    const { ex, clock } = await setup(backend.fresh);
    for (let i = 0; i < 5; i++) {
      clock.now = T0 + i;
      await ex.saveAgentResult({}, { sessionId: `r${i}`, name: "fetcher" });
    }
    clock.now = T0 + 10;
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "w1", name: "daily" }); // its step 0 is a "fetcher" too
    const fetchers = await ex.listSessions({ agentName: "fetcher" });
    expect(fetchers.items.map((i) => i.id)).toEqual(["agent-r4", "agent-r3", "agent-r2", "agent-r1", "agent-r0"]);
    expect([fetchers.total, fetchers.nextCursor]).toEqual([5, null]);
    expect((await ex.listSessions({ agentName: "fetcher", includeSteps: true })).total).toBe(6);
    const page = await ex.listSessions({ agentName: "fetcher", limit: 2, offset: 2 });
    expect([page.items.map((i) => i.id), page.total]).toEqual([["agent-r2", "agent-r1"], 5]);
    const next = await ex.listSessions({ agentName: "fetcher", limit: 2, cursor: page.nextCursor });
    expect([next.items.map((i) => i.id), next.total, next.nextCursor]).toEqual([["agent-r0"], 5, null]);
    expect((await ex.listSessions({ workflowName: "daily" })).items.map((i) => i.id)).toEqual(["workflow-w1"]);
    const all = await ex.listSessions();
    expect([all.items[0]!.id, all.total]).toEqual(["workflow-w1", 6]);
    expect((await ex.listSessions({ includeSteps: true })).total).toBe(9);
    for (const bad of [{ limit: 0 }, { limit: 101 }, { offset: -1 }, { agentName: "a", workflowName: "b" }]) {
      await expectReject(() => ex.listSessions(bad), InvalidInputError);
    }
  });

  it("listing never deletes anything, however many runs there are", async () => {
    const { ex } = await setup(backend.fresh);
    for (let i = 0; i < 60; i++) await ex.saveAgentResult({}, { sessionId: `n${i}`, name: "bulk" });
    for (let i = 0; i < 3; i++) expect((await ex.listSessions({ limit: 100 })).total).toBe(60);
    expect((await ex.listSessions({ limit: 100 })).items).toHaveLength(60);
  });

  // --- delete -----------------------------------------------------------------

  it("deleting a workflow takes its own steps and nothing else", async () => {
    const { ex } = await setup(backend.fresh);
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "job" });
    await ex.saveAgentResult({}, { sessionId: "job" }); // agent-job shares the base
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "workflow-job-extra" }); // looks like a step, other base
    await ex.saveAgentResult({}, { sessionId: "agent-unrelated" });
    const report = await ex.deleteSession("workflow-job");
    expect(report).toEqual({
      deletedIds: ["workflow-job", "workflow-job-0", "workflow-job-1", "workflow-job-2"],
      updatedParentId: null,
    });
    expect((await ex.listSessions()).items.map((i) => i.id).sort()).toEqual(["agent-job", "agent-unrelated", "workflow-job-extra"]);
    expect((await ex.getSessionMetadata("workflow-job-extra-1")).parentId).toBe("workflow-job-extra");
    expect(await ex.deleteSession("workflow-job")).toBeNull();
    expect(await ex.deleteSession("agent-nope")).toBeNull();
  });

  it("deleting a step removes it from its workflow's result and agentsInvolved; the count follows; updatedAt is now", async () => {
    const { ex, clock } = await setup(backend.fresh);
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "job" });
    clock.now = T0 + 500;
    expect(await ex.deleteSession("workflow-job-0")).toEqual({ deletedIds: ["workflow-job-0"], updatedParentId: "workflow-job" });
    const parent = await ex.getSessionMetadata("workflow-job");
    expect(parent).toMatchObject({
      messageCount: 4,
      updatedAt: T0 + 500,
      createdAt: T0,
      agentsInvolved: { "workflow-job-1": "summarizer", "workflow-job-2": "reviewer" },
    });
    const result = (await ex.getSessionResult("workflow-job")) as { steps: Array<{ sessionId: string }> };
    expect(result.steps.map((s) => s.sessionId)).toEqual(["workflow-job-1", "workflow-job-2"]);
    expect(await ex.getSessionHistory("workflow-job")).toHaveLength(4);
    await expectReject(() => ex.getSessionMetadata("workflow-job-0"), NotFoundError);
    await ex.deleteSession("workflow-job-1");
    await ex.deleteSession("workflow-job-2");
    expect(await ex.getSessionMetadata("workflow-job")).toMatchObject({ messageCount: 0, agentsInvolved: null });
  });

  // --- retention ----------------------------------------------------------------

  it("cleanup removes whole units by age (a unit is as old as its newest member) and reports them", async () => {
    const { ex, clock } = await setup(backend.fresh);
    await ex.saveAgentResult({}, { sessionId: "old" });
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "old-wf" });
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "kept-wf" });
    clock.now = T0 + 40 * DAY;
    await ex.addMessageToHistory("workflow-kept-wf-2", msg("user", "still going")); // a fresh step keeps its workflow
    await ex.saveAgentResult({}, { sessionId: "new" });
    const report = await ex.cleanup();
    expect(report.removedUnits).toBe(2);
    expect(report.removedSessions).toBe(5);
    expect([...report.removedIds].sort()).toEqual(["agent-old", "workflow-old-wf", "workflow-old-wf-0", "workflow-old-wf-1", "workflow-old-wf-2"].sort());
    expect((await ex.listSessions({ includeSteps: true })).items.map((i) => i.id).sort()).toEqual([
      "agent-new",
      "workflow-kept-wf",
      "workflow-kept-wf-0",
      "workflow-kept-wf-1",
      "workflow-kept-wf-2",
    ]);
    expect(await ex.cleanup()).toEqual({ removedUnits: 0, removedSessions: 0, removedIds: [] });
  });

  it("cleanup keeps at most maxSessions units, counting a workflow with its steps as one", async () => {
    const { ex, clock } = await setup(backend.fresh);
    for (let i = 0; i < 4; i++) {
      clock.now = T0 + i;
      await ex.saveWorkflowResult(threeSteps(), { sessionId: `wf${i}` });
      clock.now = T0 + i + 0.5;
      await ex.saveAgentResult({}, { sessionId: `ag${i}` });
    }
    const report = await ex.cleanup({ maxSessions: 3 });
    expect(report.removedUnits).toBe(5);
    expect(report.removedSessions).toBe(3 * 4 + 2);
    expect((await ex.listSessions()).items.map((i) => i.id)).toEqual(["agent-ag3", "workflow-wf3", "agent-ag2"]);
    expect((await ex.listSessions({ includeSteps: true })).total).toBe(3 + 3);
    expect((await ex.cleanup({ olderThanDays: 0 })).removedUnits).toBe(3);
    expect((await ex.listSessions({ includeSteps: true })).total).toBe(0);
    for (const bad of [{ olderThanDays: -1 }, { maxSessions: -1 }, { maxSessions: 1.5 }, { olderThanDays: Number.NaN }]) {
      await expectReject(() => ex.cleanup(bad), InvalidInputError);
    }
  });

  // --- import -------------------------------------------------------------------

  it("import: a hand-built directory with bad files, steps linked by structure, idempotent", async () => {
    const { ex } = await setup(backend.fresh);
    const report = await ex.importDirectory(FIXTURES);
    expect([...report.imported].sort()).toEqual(
      ["agent-1a2b3c4d", "agent-legacy", "agent-nightly", "workflow-nightly", "workflow-nightly-0", "workflow-nightly-1"].sort(),
    );
    expect(report.skipped.map((s) => s.file)).toEqual(["bad-time.json", "broken.json", "missing-id.json", "robot.json", "zz-duplicate.json"]);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.file, s.reason]));
    expect(reasons["broken.json"]).toMatch(/not valid JSON/);
    expect(reasons["missing-id.json"]).toMatch(/session_id/);
    expect(reasons["robot.json"]).toMatch(/result_type/);
    expect(reasons["bad-time.json"]).toMatch(/created_at/);
    expect(reasons["zz-duplicate.json"]).toMatch(/agent-1a2b3c4d.json/);

    expect(await ex.getSessionMetadata("agent-1a2b3c4d")).toMatchObject({
      name: "researcher",
      createdAt: Date.parse("2025-01-15T10:30:00.123Z") / 1000,
      updatedAt: Date.parse("2025-01-15T10:31:00Z") / 1000,
      messageCount: 2,
    });
    expect(await ex.getSessionMetadata("agent-legacy")).toMatchObject({
      name: "Untitled Agent (agent-le)",
      createdAt: 1_700_000_000,
      updatedAt: 1_700_000_060.5,
      messageCount: 3,
    });
    expect((await ex.getSessionMetadata("workflow-nightly-1")).parentId).toBe("workflow-nightly");
    expect((await ex.getSessionMetadata("agent-nightly")).parentId).toBeNull();
    expect(await ex.getSessionHistory("workflow-nightly")).toHaveLength(3);
    // Base "nightly": the workflow and the standalone agent are the primaries; the agent is newer.
    expect(await ex.resolveSessionId("nightly")).toBe("agent-nightly");

    const again = await ex.importDirectory(FIXTURES);
    expect(again.imported).toEqual([]);
    expect(again.skipped.filter((s) => /already exists/.test(s.reason))).toHaveLength(6);

    // The imported workflow cascades to its imported steps only.
    expect((await ex.deleteSession("workflow-nightly"))?.deletedIds).toEqual(["workflow-nightly", "workflow-nightly-0", "workflow-nightly-1"]);
    expect(await ex.getSessionMetadata("agent-nightly")).toMatchObject({ baseId: "nightly" });
    await expectReject(() => ex.importDirectory(`${FIXTURES}/nope`), NotFoundError);
  });

  it("deleting an imported step edits the imported workflow result (snake_case fields)", async () => {
    const { ex } = await setup(backend.fresh);
    await ex.importDirectory(FIXTURES);
    await ex.deleteSession("workflow-nightly-0");
    const parent = await ex.getSessionMetadata("workflow-nightly");
    expect(parent).toMatchObject({ messageCount: 1, agentsInvolved: { "workflow-nightly-1": "summarizer" } });
  });

  // --- owners -------------------------------------------------------------------

  it("an owner's calls see and change only that owner's sessions", async () => {
    const { ex } = await setup(backend.fresh);
    await ex.saveAgentResult({}, { sessionId: "a1", userId: "alice" });
    await ex.saveWorkflowResult(threeSteps(), { sessionId: "a2", userId: "alice" });
    await ex.saveAgentResult({}, { sessionId: "b1", userId: "bob" });
    const alice = { userId: "alice" };
    expect((await ex.getSessionMetadata("workflow-a2-1", alice)).userId).toBe("alice");
    await expectReject(() => ex.getSessionMetadata("agent-b1", alice), NotFoundError, /^Session 'agent-b1' not found$/);
    await expectReject(() => ex.getSessionHistory("b1", alice), NotFoundError);
    expect(await ex.resolveSessionId("agent-", alice)).toBe("agent-a1");
    const list = await ex.listSessions(alice);
    expect([list.items.map((i) => i.id).sort(), list.total]).toEqual([["agent-a1", "workflow-a2"], 2]);
    expect(await ex.deleteSession("agent-b1", alice)).toBeNull();
    await expectReject(() => ex.saveAgentResult({}, { sessionId: "agent-b1", userId: "alice" }), ConflictError);
    await expectReject(() => ex.addMessageToHistory("agent-b1", msg("user", "x"), alice), ConflictError);
    expect((await ex.cleanup({ olderThanDays: 0, userId: "alice" })).removedUnits).toBe(2);
    expect((await ex.listSessions()).items.map((i) => i.id)).toEqual(["agent-b1"]);
  });
});

const AURITE_CACHE = fileURLToPath(new URL("./fixtures/aurite-cache", import.meta.url));
const content = (messages: unknown[]): unknown[] => messages.map((m) => (m as { content: unknown }).content);

forEachBackend((backend) => {
  it("issue 12 #11: a run without a name is named after the first 8 characters of its id as given", async () => {
    const { ex } = await setup(backend.fresh);
    expect((await ex.saveAgentResult({}, { sessionId: "agent-1234567890" })).name).toBe("Untitled Agent (agent-12)");
    expect((await ex.saveWorkflowResult({}, { sessionId: "workflow-1234567890" })).name).toBe("Untitled Workflow (workflow)");
    expect((await ex.saveAgentResult({}, { sessionId: "run42" })).name).toBe("Untitled Agent (run42)"); // stored as agent-run42
    expect((await ex.addMessageToHistory("agent-abcdefghij", msg("user", "hi"))).name).toBe("Untitled Agent (agent-ab)");
  });

  it("issue 12 #12: an agent result in Aurite's shape (snake_case or camelCase) keeps its name and conversation", async () => {
    const { ex } = await setup(backend.fresh);
    const two = [msg("user", "2+2?"), msg("assistant", "4")];
    const snake = await ex.saveAgentResult({ agent_name: "X", conversation_history: two, final_response: "4", status: "success" });
    expect(snake).toMatchObject({ name: "X", messageCount: 2 });
    expect(await ex.getSessionHistory(snake.id)).toEqual(two);
    expect(await ex.getSessionResult(snake.id)).toMatchObject({ status: "success", finalResponse: "4", messages: two });
    const camel = await ex.saveAgentResult({ agentName: "Y", conversationHistory: two });
    expect(camel).toMatchObject({ name: "Y", messageCount: 2 });
    expect(await ex.getSessionHistory(camel.id)).toEqual(two);
    // An explicit name wins over the result's own.
    expect((await ex.saveAgentResult({ agent_name: "X", conversation_history: two }, { name: "Z" })).name).toBe("Z");
    // Appending continues the same conversation.
    expect((await ex.addMessageToHistory(snake.id, msg("user", "thanks"))).messageCount).toBe(3);
    expect(content(await ex.getSessionHistory(snake.id))).toEqual(["2+2?", "4", "thanks"]);
  });

  it("issue 12 #12: a workflow result in Aurite's shape (step_results / stepResults / nodeResults) keeps its steps' conversations", async () => {
    const { ex } = await setup(backend.fresh);
    const aurite = await ex.saveWorkflowResult(
      {
        workflow_name: "weather_report",
        status: "completed",
        step_results: [
          {
            step_name: "weather_agent",
            step_type: "agent",
            result: { status: "success", agent_name: "weather_agent", conversation_history: [msg("user", "Paris?"), msg("assistant", "sunny")] },
          },
          { step_name: "summary_agent", step_type: "agent", result: { agent_name: "summary_agent", conversation_history: [msg("assistant", "nice")] } },
        ],
        final_output: "nice",
      },
      { sessionId: "report" },
    );
    expect(aurite).toMatchObject({
      id: "workflow-report",
      name: "weather_report",
      messageCount: 3,
      agentsInvolved: { "workflow-report-0": "weather_agent", "workflow-report-1": "summary_agent" },
    });
    expect(content(await ex.getSessionHistory("workflow-report"))).toEqual(["Paris?", "sunny", "nice"]);
    expect(await ex.getSessionMetadata("workflow-report-0")).toMatchObject({ name: "weather_agent", messageCount: 2, parentId: "workflow-report" });
    expect(content(await ex.getSessionHistory("workflow-report-1"))).toEqual(["nice"]);
    expect(await ex.getSessionResult("workflow-report")).toMatchObject({ finalResponse: "nice" });

    const camel = await ex.saveWorkflowResult({
      workflowName: "camel",
      stepResults: [{ agentName: "a", conversationHistory: [msg("user", "one")] }],
      nodeResults: { review: { agent_name: "b", conversation_history: [msg("user", "two")] } },
    });
    expect(camel).toMatchObject({ name: "camel", messageCount: 2 });
    expect(content(await ex.getSessionHistory(camel.id))).toEqual(["one", "two"]);
    expect((await ex.getSessionMetadata(`${camel.id}-review`)).name).toBe("b");

    const nodes = await ex.saveWorkflowResult({ node_results: { fetch: { result: { agent_name: "f", conversation_history: [msg("user", "x")] } } } });
    expect(content(await ex.getSessionHistory(`${nodes.id}-fetch`))).toEqual(["x"]);
  });

  it("issue 12 #12: a result whose conversation cannot be read is refused with an error naming the fields, and nothing is stored", async () => {
    const { ex } = await setup(backend.fresh);
    await expect(ex.saveAgentResult({ conversation_history: "hello" })).rejects.toThrow(/conversation_history must be an array of messages/u);
    await expect(ex.saveAgentResult({ messages: [msg("user", "a")], conversation_history: [msg("user", "b")] })).rejects.toThrow(
      /messages.*conversation_history.*one of them/su,
    );
    await expect(ex.saveWorkflowResult({ steps: [], step_results: [{ result: {} }] })).rejects.toThrow(/steps.*step_results.*one of them/su);
    await expect(ex.saveWorkflowResult({ step_results: [{ result: { conversation_history: 5 } }] })).rejects.toBeInstanceOf(InvalidInputError);
    expect((await ex.listSessions({ includeSteps: true })).total).toBe(0);
  });

  it("issue 12 #13: importing an Aurite cache directory twice adds nothing; agent and workflow histories (steps included) read back", async () => {
    const { ex } = await setup(backend.fresh);
    // Aurite writes naive UTC times; they must not be read as local time.
    const tz = process.env["TZ"];
    process.env["TZ"] = "Asia/Tokyo";
    let first: Awaited<ReturnType<typeof ex.importDirectory>>;
    try {
      first = await ex.importDirectory(AURITE_CACHE);
    } finally {
      if (tz === undefined) delete process.env["TZ"];
      else process.env["TZ"] = tz;
    }
    expect(first.skipped).toEqual([]);
    const all = async () => (await ex.listSessions({ includeSteps: true, limit: 100 })).items.map((s) => s.id).sort();
    const afterFirst = await all();
    expect(afterFirst).toEqual(["agent-7f3c9a1e", "workflow-5d2e8b10", "workflow-5d2e8b10-0", "workflow-5d2e8b10-1"]);

    const second = await ex.importDirectory(AURITE_CACHE);
    expect(second.imported).toEqual([]);
    expect(await all()).toEqual(afterFirst);

    expect(await ex.getSessionMetadata("agent-7f3c9a1e")).toMatchObject({
      name: "weather_agent",
      messageCount: 2,
      createdAt: Date.parse("2025-03-04T09:15:02.118734Z") / 1000,
    });
    expect(content(await ex.getSessionHistory("agent-7f3c9a1e"))).toEqual(["Weather in Paris?", "It is 18°C and sunny in Paris."]);
    expect(await ex.getSessionMetadata("workflow-5d2e8b10")).toMatchObject({ name: "weather_report", messageCount: 4, baseId: "5d2e8b10" });
    expect(content(await ex.getSessionHistory("workflow-5d2e8b10"))).toEqual([
      "Weather in Paris?",
      "Paris: 18°C, sunny.",
      "Paris: 18°C, sunny.",
      "Nice day in Paris.",
    ]);
    expect(await ex.getSessionMetadata("workflow-5d2e8b10-1")).toMatchObject({
      name: "summary_agent",
      parentId: "workflow-5d2e8b10",
      baseId: "5d2e8b10",
      messageCount: 2,
    });
    expect(content(await ex.getSessionHistory("workflow-5d2e8b10-0"))).toEqual(["Weather in Paris?", "Paris: 18°C, sunny."]);

    // A step's new message reaches its workflow's history; deleting it takes it out of the workflow.
    await ex.addMessageToHistory("workflow-5d2e8b10-1", msg("user", "thanks"));
    expect(content(await ex.getSessionHistory("workflow-5d2e8b10")).at(-1)).toBe("thanks");
    await ex.deleteSession("workflow-5d2e8b10-0");
    expect(await ex.getSessionMetadata("workflow-5d2e8b10")).toMatchObject({
      messageCount: 3,
      agentsInvolved: { "workflow-5d2e8b10-1": "summary_agent" },
    });
    expect((await ex.importDirectory(AURITE_CACHE)).imported).toEqual([]);
    expect(await all()).toEqual(["agent-7f3c9a1e", "workflow-5d2e8b10", "workflow-5d2e8b10-1"]);
  });

  it("issue 12 #12: an imported file without a name takes the agent or workflow name of its result", async () => {
    const { ex, tdb: _tdb } = await setup(backend.fresh);
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "tl-aurite-"));
    try {
      writeFileSync(
        join(dir, "agent-x.json"),
        JSON.stringify({
          session_id: "agent-x",
          result_type: "agent",
          created_at: "2025-03-04T09:15:02",
          execution_result: { agent_name: "X", conversation_history: [msg("user", "a"), msg("assistant", "b")] },
        }),
      );
      writeFileSync(
        join(dir, "workflow-y.json"),
        JSON.stringify({
          session_id: "workflow-y",
          result_type: "workflow",
          created_at: "2025-03-04T09:15:02",
          execution_result: {
            workflow_name: "Y",
            step_results: [{ result: { session_id: "workflow-y-0", agent_name: "s", conversation_history: [msg("user", "c")] } }],
          },
        }),
      );
      expect((await ex.importDirectory(dir)).imported.sort()).toEqual(["agent-x", "workflow-y", "workflow-y-0"]);
      expect(await ex.getSessionMetadata("agent-x")).toMatchObject({ name: "X", messageCount: 2 });
      expect(await ex.getSessionMetadata("workflow-y")).toMatchObject({ name: "Y", messageCount: 1, agentsInvolved: { "workflow-y-0": "s" } });
      expect(await ex.getSessionMetadata("workflow-y-0")).toMatchObject({ name: "s", parentId: "workflow-y", messageCount: 1 });
      expect(content(await ex.getSessionHistory("workflow-y-0"))).toEqual(["c"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
