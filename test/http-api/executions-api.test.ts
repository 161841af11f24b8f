/**
 * The execution history routes over real loopback HTTP, on SQLite and PostgreSQL:
 * listing with filters and totals, resolution (exact, prefix, base; 404 and 400 with the
 * candidates), deletes with their cascade, appending a message, and cleanup.
 */
import { afterEach, expect, it } from "vitest";
import { Executions } from "../../src/executions/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { call, closeServers, seed, startApi } from "./api-harness.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("GET /execution/history lists newest first with the total; agent_name, workflow_name, include_steps, limit and offset", async () => {
    const { db } = await backend.fresh();
    const { executions } = await seed(db);
    const api = await startApi(db);
    const all = await call(api, "GET", "/execution/history");
    expect(all.status).toBe(200);
    const page = await executions.listSessions();
    // The HTTP listing pages by offset: the library page's items and total, with its own window (no cursor).
    expect(all.body).toEqual({ items: page.items, total: page.total, limit: 50, offset: 0 });
    expect(all.body.total).toBe(3);
    expect(all.body.items.map((r: { id: string }) => r.id)).toEqual(["workflow-report", "agent-calc-bob", "agent-calc-alice"]);

    const calculator = await call(api, "GET", "/execution/history?agent_name=calculator");
    expect(calculator.body.items.map((r: { id: string }) => r.id)).toEqual(["agent-calc-bob", "agent-calc-alice"]);
    expect(calculator.body.total).toBe(2);
    const researcher = await call(api, "GET", "/execution/history?agent_name=researcher");
    expect(researcher.body).toEqual({ items: [], total: 0, limit: 50, offset: 0 }); // steps are not direct runs
    const workflow = await call(api, "GET", "/execution/history?workflow_name=daily-report");
    expect(workflow.body.items.map((r: { id: string }) => r.id)).toEqual(["workflow-report"]);
    const steps = await call(api, "GET", "/execution/history?include_steps=true");
    expect(steps.body.total).toBe(5);
    const paged = await call(api, "GET", "/execution/history?limit=1&offset=1");
    expect(paged.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(paged.body.items.map((r: { id: string }) => r.id)).toEqual(["agent-calc-bob"]);

    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["agent_name=a&workflow_name=b", "workflow_name"],
      ["agentName=calculator", "agentName"],
    ] as const) {
      const reply = await call(api, "GET", `/execution/history?${query}`);
      expect(reply.status, query).toBe(422);
      expect(reply.body.error.code).toBe("TL_ERR_INVALID_INPUT");
      expect(reply.body.error.details.field, query).toBe(field);
    }
  });

  it("GET /execution/history/{id} resolves exact ids, prefixes and base ids; 404 names the id", async () => {
    const { db } = await backend.fresh();
    const { executions } = await seed(db);
    const api = await startApi(db);
    const exact = await call(api, "GET", "/execution/history/workflow-report");
    expect(exact.status).toBe(200);
    expect(exact.body).toEqual(await executions.getSession("workflow-report"));
    expect(exact.body.agentsInvolved).toEqual({ "workflow-report-0": "researcher", "workflow-report-1": "writer" });
    expect(exact.body.result.steps).toHaveLength(2);
    // A prefix that also matches the workflow's steps is not ambiguous; nor is the base id.
    expect((await call(api, "GET", "/execution/history/workflow-rep")).body.id).toBe("workflow-report");
    expect((await call(api, "GET", "/execution/history/report")).body.id).toBe("workflow-report");
    expect((await call(api, "GET", "/execution/history/workflow-report-1")).body).toMatchObject({
      id: "workflow-report-1",
      parentId: "workflow-report",
      name: "writer",
    });
    expect((await call(api, "GET", "/execution/history/calc-alice")).body.id).toBe("agent-calc-alice");
    const missing = await call(api, "GET", "/execution/history/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: "TL_ERR_NOT_FOUND", message: "Session 'nothing-here' not found" } });
  });

  it("GET /execution/history/{id}: an ambiguous partial id is 400 with the candidates in details", async () => {
    const { db } = await backend.fresh();
    const executions = new Executions(db);
    for (const name of ["alpha", "beta", "gamma"]) {
      await executions.saveAgentResult({ messages: [] }, { sessionId: `job-${name}`, name });
    }
    const api = await startApi(db);
    const reply = await call(api, "GET", "/execution/history/agent-job-");
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("TL_ERR_AMBIGUOUS_ID");
    expect(reply.body.error.message).toContain("ambiguous");
    expect(reply.body.error.details.more).toBe(false);
    expect(reply.body.error.details.candidates.map((c: { id: string }) => c.id).sort()).toEqual(["agent-job-alpha", "agent-job-beta", "agent-job-gamma"]);
    expect(reply.body.error.details.candidates[0]).toEqual({ id: expect.any(String), kind: "agent", name: expect.any(String), updatedAt: expect.any(Number) });
    for (let i = 0; i < 4; i++) await executions.saveAgentResult({ messages: [] }, { sessionId: `job-extra-${i}` });
    const many = await call(api, "GET", "/execution/history/agent-job-");
    expect(many.body.error.details.candidates).toHaveLength(5);
    expect(many.body.error.details.more).toBe(true);
  });

  it("DELETE /execution/history/{id}: a workflow goes with its steps only (204), then 404; a step leaves its workflow", async () => {
    const { db } = await backend.fresh();
    const { executions } = await seed(db);
    // A standalone run sharing the workflow's base must survive.
    await executions.saveAgentResult({ messages: [{ role: "user", content: "hi" }] }, { sessionId: "report", name: "loner" });
    const api = await startApi(db);
    const step = await call(api, "DELETE", "/execution/history/workflow-report-0");
    expect(step.status).toBe(204);
    const parent = await call(api, "GET", "/execution/history/workflow-report");
    expect(parent.body.agentsInvolved).toEqual({ "workflow-report-1": "writer" });
    expect(parent.body.messageCount).toBe(2);
    const deleted = await call(api, "DELETE", "/execution/history/workflow-report");
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect(await db.getExecution("workflow-report-1")).toBeNull();
    expect(await db.getExecution("agent-report")).not.toBeNull();
    const again = await call(api, "DELETE", "/execution/history/workflow-report");
    expect(again.status).toBe(404);
    expect(again.body.error.message).toBe("Session 'workflow-report' not found");
    // Deletes take exact ids only: a prefix is not resolved.
    expect((await call(api, "DELETE", "/execution/history/agent-calc")).status).toBe(404);
    expect(await db.getExecution("agent-calc-alice")).not.toBeNull();
  });

  it("POST /execution/history/{id}/messages appends (201); a workflow is 409; unknown is 404; a body without role is 422", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const added = await call(api, "POST", "/execution/history/calc-alice/messages", { body: { role: "user", content: "and 5+5?", meta: { a: 1 } } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ id: "agent-calc-alice", kind: "agent", messageCount: 3 });
    const history = await call(api, "GET", "/execution/history/agent-calc-alice");
    expect(history.body.result.messages.at(-1)).toEqual({ role: "user", content: "and 5+5?", meta: { a: 1 } });
    const step = await call(api, "POST", "/execution/history/workflow-report-1/messages", { body: { role: "assistant", content: "revised" } });
    expect(step.status).toBe(201);
    expect((await call(api, "GET", "/execution/history/workflow-report")).body.messageCount).toBe(5);
    const workflow = await call(api, "POST", "/execution/history/workflow-report/messages", { body: { role: "user", content: "x" } });
    expect(workflow.status).toBe(409);
    expect(workflow.body.error).toMatchObject({ code: "TL_ERR_CONFLICT", details: { sessionId: "workflow-report" } });
    const missing = await call(api, "POST", "/execution/history/nobody/messages", { body: { role: "user", content: "x" } });
    expect(missing.status).toBe(404);
    expect(await db.getExecution("agent-nobody")).toBeNull(); // the API never creates a run by appending
    const noRole = await call(api, "POST", "/execution/history/calc-alice/messages", { body: { content: "x" } });
    expect(noRole.status).toBe(422);
    expect(noRole.body.error.details).toEqual({ field: "role", in: "body" });
  });

  it("POST /execution/history/cleanup removes whole units and returns the counts; defaults with an empty body; 422 on bad values", async () => {
    const { db } = await backend.fresh();
    const { executions } = await seed(db);
    const api = await startApi(db);
    const none = await call(api, "POST", "/execution/history/cleanup");
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ removedUnits: 0, removedSessions: 0, removedIds: [] });
    const keepOne = await call(api, "POST", "/execution/history/cleanup", { body: { maxSessions: 1 } });
    expect(keepOne.status).toBe(200);
    expect(keepOne.body.removedUnits).toBe(2);
    expect(keepOne.body.removedSessions).toBe(2);
    expect(keepOne.body.removedIds.sort()).toEqual(["agent-calc-alice", "agent-calc-bob"]);
    const all = await call(api, "POST", "/execution/history/cleanup", { body: { olderThanDays: 0 } });
    expect(all.body).toEqual({ removedUnits: 1, removedSessions: 3, removedIds: ["workflow-report", "workflow-report-0", "workflow-report-1"] });
    expect((await executions.listSessions()).total).toBe(0);
    for (const [body, field] of [
      [{ olderThanDays: -1 }, "olderThanDays"],
      [{ maxSessions: 1.5 }, "maxSessions"],
      [{ maxSessions: "ten" }, "maxSessions"],
      [{ olderThan: 3 }, "olderThan"],
    ] as const) {
      const reply = await call(api, "POST", "/execution/history/cleanup", { body });
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.body.error.details.field).toBe(field);
    }
    const badJson = await call(api, "POST", "/execution/history/cleanup", { body: "{not json" });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe("TL_ERR_BAD_REQUEST");
  });
});
