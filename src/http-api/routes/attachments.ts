/**
 * A session's attachments (photos, voice notes, files people sent): the list
 * (`GET /sessions/{id}/attachments`) and the bytes of one (`GET`/`HEAD
 * /sessions/{id}/attachments/{sha256}`).
 *
 * Scoping goes through the session, exactly as on every session route: another tenant's
 * session is the same 404 as a missing one, and an attachment is served only when a message
 * of that session refers to it (the same bytes in another session of another tenant are
 * not reachable through this one). Stored media is untrusted: see `../attachment-headers.ts`
 * for the headers that keep a browser from running any of it.
 *
 * @module
 */
import { Readable } from "node:stream";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { NotFoundError } from "../../store/index.js";
import { type ApiContext, visibleSession } from "../api-context.js";
import { ATTACHMENT_CSP, attachmentFileName, contentDisposition, servedContentType, servedInline } from "../attachment-headers.js";
import { HttpError } from "../error-handler.js";
import { attachmentListSchema, attachmentParams, errorSchema, idParams } from "../schemas.js";

/** How long a browser may keep an attachment (its bytes never change: the id is their hash). */
export const ATTACHMENT_MAX_AGE_SECONDS = 86_400;

const SHA256 = /^[0-9a-f]{64}$/u;

const notFound = { description: "No such session, or another tenant's (TL_ERR_NOT_FOUND).", schema: errorSchema };

/** The attachment id of a path, lower-cased; anything but 64 hex digits is a 400 (it never reaches the store). */
export function attachmentId(raw: string): string {
  const sha256 = raw.toLowerCase();
  if (!SHA256.test(sha256)) {
    throw new HttpError(
      "TL_ERR_BAD_REQUEST",
      "An attachment id is the 64 hex digits of its SHA-256, as the message's attachment part names it (attachment.sha256); this path segment is not one.",
      { details: { field: "sha256", in: "path" } },
    );
  }
  return sha256;
}

function notStored(id: string, sha256: string): HttpError {
  return new HttpError(
    "TL_ERR_NOT_FOUND",
    `The attachment ${sha256} of session '${id}' is not stored: the session was imported from a copy exported without media ` +
      "(sessions export --media skip), so only its description is kept. Import a copy exported with its media to get the bytes back.",
    { details: { sha256, stored: false } },
  );
}

/** Streams `chunks` as the body, reading the first before the status goes out (an early failure is still an error reply). */
async function sendBytes(reply: FastifyReply, chunks: AsyncIterable<Uint8Array>, ctx: ApiContext): Promise<FastifyReply> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  const request = reply.request;
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      for (let next = first; next.done !== true; next = await iterator.next()) yield next.value;
    } catch (error) {
      (ctx.errorLogger ?? request.log).error(
        { err: error, requestId: request.id, method: request.method, url: request.url },
        "attachment failed mid-stream; the response was cut",
      );
      throw error;
    } finally {
      await iterator.return?.();
    }
  }
  return reply.send(Readable.from(body(), { objectMode: false }));
}

/** The attachments resource (`/sessions/{id}/attachments…`). */
export const attachmentRoutes: FastifyPluginAsync<ApiContext> = async (api, ctx) => {
  const { db, registry } = ctx;

  /** GET and HEAD: every check, then the headers, then (GET) the bytes. */
  const serve = async (request: FastifyRequest, reply: FastifyReply, withBody: boolean): Promise<FastifyReply> => {
    const params = request.params as { id: string; sha256: string };
    const sha256 = attachmentId(params.sha256);
    await visibleSession(db, request, params.id);
    const ref = await db.findAttachment(params.id, sha256);
    if (ref === null) throw new NotFoundError(`Session '${params.id}' has no attachment ${sha256}.`);
    const blob = await db.getMedia(sha256);
    if (blob === null) throw notStored(params.id, sha256);
    // Inline only when both the message's reference and the stored blob say raster image.
    const type = servedContentType(blob.mimeType);
    const inline = servedInline(blob.mimeType) && servedInline(ref.mimeType);
    const name = attachmentFileName(ref.fileName, sha256, type);
    const etag = `"${sha256}"`;
    reply
      .header("content-type", type)
      .header("x-content-type-options", "nosniff")
      .header("content-security-policy", ATTACHMENT_CSP)
      .header("content-disposition", contentDisposition(inline ? type : "application/octet-stream", name))
      .header("cache-control", `private, max-age=${ATTACHMENT_MAX_AGE_SECONDS}, immutable`)
      .header("vary", "authorization, x-api-key")
      .header("etag", etag)
      .header("cross-origin-resource-policy", "same-origin");
    const match = request.headers["if-none-match"];
    if (typeof match === "string" && match.split(",").some((tag) => tag.trim().replace(/^W\//u, "") === etag)) {
      return reply.code(304).send();
    }
    reply.header("content-length", String(blob.size));
    if (!withBody) return reply.code(200).send();
    const chunks = await db.streamMedia(sha256);
    if (chunks === null) {
      reply.removeHeader("content-disposition").removeHeader("content-length").removeHeader("etag").removeHeader("cache-control");
      throw notStored(params.id, sha256);
    }
    return sendBytes(reply.code(200), chunks, ctx);
  };

  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/attachments",
    operationId: "listSessionAttachments",
    tag: "sessions",
    summary: "A session's attachments",
    description:
      "Every attachment part of the session's visible messages (photos, voice notes, files), oldest first, one entry per reference. " +
      "stored says whether the bytes are there; GET /sessions/{id}/attachments/{sha256} serves them.",
    params: idParams,
    responses: { 200: { description: "The attachments.", schema: attachmentListSchema }, 404: notFound },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      await visibleSession(db, request, id);
      return { items: await db.listAttachments(id) };
    },
  });

  const description =
    "The bytes of an attachment that a message of this session refers to, streamed. Content-Type is the stored type; " +
    "only JPEG, PNG, GIF and WebP images are Content-Disposition: inline, anything else (SVG and HTML included) is attachment, " +
    "with the sender's file name. Every reply has X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox; default-src 'none'. " +
    `The bytes never change (the id is their SHA-256): Cache-Control: private, max-age=${ATTACHMENT_MAX_AGE_SECONDS}, immutable, and an ETag (If-None-Match gives 304).`;
  const responses = {
    200: {
      description: "The bytes, with Content-Type, Content-Length, Content-Disposition.",
      schema: { type: "string", format: "binary" },
      contentType: "*/*",
    },
    304: { description: "Not modified (If-None-Match named its ETag)." },
    400: { description: "The sha256 path segment is not 64 hex digits (TL_ERR_BAD_REQUEST).", schema: errorSchema },
    404: {
      description:
        "No such session, or another tenant's; or no message of the session refers to this attachment; or its bytes are not stored " +
        "(an import of an export made without media: details.stored is false) (TL_ERR_NOT_FOUND).",
      schema: errorSchema,
    },
  };
  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/attachments/:sha256",
    operationId: "getSessionAttachment",
    tag: "sessions",
    summary: "The bytes of one attachment",
    description,
    params: attachmentParams,
    responses,
    handler: async (request, reply) => serve(request, reply, true),
  });
  registry.add(api, {
    method: "HEAD",
    url: "/sessions/:id/attachments/:sha256",
    operationId: "headSessionAttachment",
    tag: "sessions",
    summary: "The headers of one attachment, without its bytes",
    description: "Exactly the headers GET gives (Content-Type, Content-Length, Content-Disposition…), and no body.",
    params: attachmentParams,
    responses: { ...responses, 200: { description: "The headers of the attachment; no body." } },
    handler: async (request, reply) => serve(request, reply, false),
  });
};
