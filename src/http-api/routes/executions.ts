/**
 * Execution sessions (`/execution/history…`): the history of agent and workflow runs,
 * through `threadline/executions`. Listing by agent or workflow name, one session by exact
 * id, unique prefix or base id (ambiguity is a 400 with the candidates), exact deletes
 * with their cascade, appending a message, and the explicit retention cleanup. A scoped
 * key sees and changes only its tenant's runs; another tenant's run is "not found".
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import { InvalidInputError, NotFoundError } from "../../store/index.js";
import { scopeOf } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import {
  cleanupBody,
  cleanupReportSchema,
  errorSchema,
  executionIdParams,
  executionMessageBody,
  executionMetadataSchema,
  executionPageSchema,
  executionSessionSchema,
  idParams,
} from "../schemas.js";

const notFound = { description: "No such session, or another tenant's: `Session '<id>' not found` (TL_ERR_NOT_FOUND).", schema: errorSchema };
const ambiguous = {
  description:
    "The partial id matches several sessions; details.candidates lists up to 5 ({ id, kind, name, updatedAt }), details.more says whether there are others (TL_ERR_AMBIGUOUS_ID).",
  schema: errorSchema,
};

interface HistoryQuery {
  agent_name?: string;
  workflow_name?: string;
  include_steps?: boolean;
  limit?: number;
  offset?: number;
}

/** The executions resource (`/execution/history…`). */
export const executionRoutes: FastifyPluginAsync<ApiContext> = async (api, { executions, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/execution/history",
    operationId: "listExecutions",
    tag: "executions",
    summary: "List agent and workflow runs",
    description:
      "Newest update first, with the total after filtering. agent_name lists direct runs of that agent (not workflow steps); workflow_name lists runs of that workflow. Never deletes anything.",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        agent_name: { type: "string", minLength: 1, description: "Only direct runs of this agent." },
        workflow_name: { type: "string", minLength: 1, description: "Only runs of this workflow (not with agent_name)." },
        include_steps: { type: "boolean", default: false, description: "List workflow steps as rows of their own too." },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 50, description: "Page size, 1–100 (default 50)." },
        offset: { type: "integer", minimum: 0, default: 0, description: "Rows to skip." },
      },
    },
    responses: { 200: { description: "A page of runs and the total.", schema: executionPageSchema } },
    handler: async (request) => {
      const q = request.query as HistoryQuery;
      if (q.agent_name !== undefined && q.workflow_name !== undefined) {
        throw new InvalidInputError("Filter by agent_name or by workflow_name, not both.", { field: "workflow_name" });
      }
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const page = await executions.listSessions({
        ...(q.agent_name === undefined ? {} : { agentName: q.agent_name }),
        ...(q.workflow_name === undefined ? {} : { workflowName: q.workflow_name }),
        includeSteps: q.include_steps ?? false,
        limit,
        offset,
        ...scopeOf(request),
      });
      // The HTTP listing pages by offset: it answers with the page, the total and its own window.
      return { items: page.items, total: page.total, limit, offset };
    },
  });

  registry.add(api, {
    method: "GET",
    url: "/execution/history/:id",
    operationId: "getExecution",
    tag: "executions",
    summary: "One run with its result",
    description:
      "Resolves the id: the exact id; else a unique id prefix; else a base id (the workflow or run that is not a step of another match). Returns the metadata and the full stored result.",
    params: executionIdParams,
    responses: { 200: { description: "The run.", schema: executionSessionSchema }, 400: ambiguous, 404: notFound },
    handler: async (request) => executions.getSession((request.params as { id: string }).id, scopeOf(request)),
  });

  registry.add(api, {
    method: "DELETE",
    url: "/execution/history/:id",
    operationId: "deleteExecution",
    tag: "executions",
    summary: "Delete a run (exact id)",
    description:
      "A workflow goes with its own steps and nothing else; a deleted step is removed from its workflow's result and agentsInvolved. Partial ids are not resolved here: pass the full id.",
    params: idParams,
    responses: { 204: { description: "Deleted." }, 404: notFound },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const report = await executions.deleteSession(id, scopeOf(request));
      if (report === null) throw new NotFoundError(`Session '${id}' not found`);
      return reply.code(204).send();
    },
  });

  registry.add(api, {
    method: "POST",
    url: "/execution/history/:id/messages",
    operationId: "addExecutionMessage",
    tag: "executions",
    summary: "Append a message to an agent run",
    description:
      "Appends to an existing agent run (id resolved like GET; a workflow step's workflow is updated too). A workflow run is refused with 409: add the message to one of its steps.",
    params: executionIdParams,
    body: executionMessageBody,
    responses: {
      201: { description: "Appended; the run's metadata.", schema: executionMetadataSchema },
      400: ambiguous,
      404: notFound,
      409: { description: "The run is a workflow (TL_ERR_CONFLICT).", schema: errorSchema },
    },
    handler: async (request, reply) => {
      const scope = scopeOf(request);
      const id = await executions.resolveSessionId((request.params as { id: string }).id, scope);
      const metadata = await executions.addMessageToHistory(id, request.body as Record<string, unknown>, scope);
      return reply.code(201).send(metadata);
    },
  });

  registry.add(api, {
    method: "POST",
    url: "/execution/history/cleanup",
    operationId: "cleanupExecutions",
    tag: "executions",
    summary: "Remove old runs (retention)",
    description:
      "Removes whole units (a run without a parent, with its steps) not updated for olderThanDays, then the oldest beyond the newest maxSessions. A scoped key cleans up only its tenant's runs. An empty body uses the defaults (30 days, 50 units).",
    body: cleanupBody,
    bodyOptional: true,
    responses: { 200: { description: "What was removed.", schema: cleanupReportSchema } },
    handler: async (request) => {
      const body = (request.body ?? {}) as { olderThanDays?: number; maxSessions?: number };
      return executions.cleanup({ ...body, ...scopeOf(request) });
    },
  });
};
