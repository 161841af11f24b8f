/**
 * Pairing (`/pairing`): who may talk to the agent on a chat platform. The pending codes and
 * approved people (`GET /pairing`), approving a code (`POST /pairing/approve`, the code in
 * the body so it never appears in a URL or an access log) and revoking an approval
 * (`DELETE /pairing/{platform}/{userId}`). They span every tenant, so only admin keys may use
 * them. Times are epoch seconds, as everywhere in this API (the store keeps milliseconds).
 *
 * @module
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { NotFoundError, PAIRING_PLATFORMS, type PairingApproval, type PairingRequest } from "../../store/index.js";
import { principalOf, requireAdmin } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import { HttpError } from "../error-handler.js";
import { errorSchema, pairingApprovalSchema, pairingListSchema } from "../schemas.js";

const forbidden = { description: "A key scoped to a user (TL_ERR_FORBIDDEN).", schema: errorSchema };
const platformSchema = { type: "string", enum: [...PAIRING_PLATFORMS], description: `One of ${PAIRING_PLATFORMS.join(", ")}.` };

const seconds = (ms: number): number => ms / 1000;
const requestOut = (r: PairingRequest): PairingRequest => ({ ...r, createdAt: seconds(r.createdAt), expiresAt: seconds(r.expiresAt) });
const approvalOut = (a: PairingApproval): PairingApproval => ({ ...a, approvedAt: seconds(a.approvedAt) });

/** Who approves through this API, as stored: `http`, or `http:<key name>` for a named key. */
function approver(request: FastifyRequest): string {
  const { name } = principalOf(request);
  return name === null || name === "" ? "http" : `http:${name}`;
}

/** The pairing resource (`/pairing`). */
export const pairingRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/pairing",
    operationId: "listPairing",
    tag: "pairing",
    summary: "Pending pairing codes and approved people (admin keys only)",
    description: "Unexpired codes (oldest first) with who asked, and the people approved to talk to the agent. A key scoped to a user gets 403.",
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: { platform: { ...platformSchema, description: "Only this platform." } },
    },
    responses: { 200: { description: "The pending codes and approvals.", schema: pairingListSchema }, 403: forbidden },
    handler: async (request) => {
      requireAdmin(request);
      const { platform } = request.query as { platform?: string };
      const list = await db.listPairing(platform === undefined ? {} : { platform });
      return { pending: list.pending.map(requestOut), approved: list.approved.map(approvalOut) };
    },
  });

  registry.add(api, {
    method: "POST",
    url: "/pairing/approve",
    operationId: "approvePairingCode",
    tag: "pairing",
    summary: "Approve a pending pairing code (admin keys only)",
    description:
      "The person who was given the code is answered from their next message on; their other pending codes are removed. " +
      "The code is matched in any case, ignoring spaces and dashes. An unknown or expired code is a failed approval (404); " +
      "after 5 on a platform, approvals there are refused for an hour (409, details.until in epoch seconds), even with the right code.",
    body: {
      type: "object",
      required: ["platform", "code"],
      additionalProperties: false,
      properties: {
        platform: platformSchema,
        code: { type: "string", minLength: 1, maxLength: 64, description: "The code the person was given." },
      },
    },
    responses: {
      200: {
        description: "Approved.",
        schema: { type: "object", required: ["approved"], properties: { approved: pairingApprovalSchema } },
      },
      403: forbidden,
      404: { description: "No pending, unexpired code on that platform matches (TL_ERR_NOT_FOUND). It counts as a failed approval.", schema: errorSchema },
      409: { description: "Approvals on that platform are locked after 5 failed attempts (TL_ERR_CONFLICT; details.until).", schema: errorSchema },
    },
    handler: async (request) => {
      requireAdmin(request);
      const { platform, code } = request.body as { platform: string; code: string };
      const outcome = await db.approvePairingCode(platform, code, { by: approver(request) });
      if (outcome.kind === "locked-out") {
        throw new HttpError(
          "TL_ERR_CONFLICT",
          `Approvals on ${platform} are locked after 5 failed attempts, until ${new Date(outcome.until).toISOString()}. Nothing was approved; try again then.`,
          { details: { platform, until: seconds(outcome.until) } },
        );
      }
      if (outcome.kind === "unknown-code") {
        // The code is not repeated: error messages may be logged.
        throw new NotFoundError(
          `No pending pairing code on ${platform} matches (codes expire after an hour). Each failed attempt counts: 5 lock approvals on ${platform} for an hour.`,
        );
      }
      return { approved: approvalOut(outcome.approval) };
    },
  });

  registry.add(api, {
    method: "DELETE",
    url: "/pairing/:platform/:userId",
    operationId: "revokePairing",
    tag: "pairing",
    summary: "Revoke a person's approval (admin keys only)",
    description: "Their next message is treated as a stranger's.",
    params: {
      type: "object",
      required: ["platform", "userId"],
      additionalProperties: false,
      properties: { platform: platformSchema, userId: { type: "string", minLength: 1, maxLength: 256, description: "Their user id on that platform." } },
    },
    responses: {
      204: { description: "Revoked." },
      403: forbidden,
      404: { description: "That person is not approved (TL_ERR_NOT_FOUND).", schema: errorSchema },
    },
    handler: async (request, reply) => {
      requireAdmin(request);
      const { platform, userId } = request.params as { platform: string; userId: string };
      if (!(await db.revokePairing(platform, userId))) throw new NotFoundError(`No approval of that user on ${platform}.`);
      return reply.code(204).send();
    },
  });
};
