/**
 * The running gateway, live (`GET /gateway/live`, server-sent events) and as one snapshot
 * (`GET /gateway/status`): running turns, live agents, queue depths, adapters. Served only
 * by `threadline serve` (elsewhere: 404). The figures span every tenant, so only admin keys
 * may read them.
 *
 * @module
 */
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { NotFoundError } from "../../store/index.js";
import { requireAdmin } from "../auth.js";
import type { ApiContext } from "../api-context.js";
import { HttpError } from "../error-handler.js";
import type { GatewayLiveSnapshot, GatewayLiveSource } from "../gateway-live.js";
import { errorSchema, gatewaySnapshotSchema } from "../schemas.js";

/** Most event streams open at once (each polls the gateway once per interval). */
export const MAX_LIVE_STREAMS = 8;

/** Intervals without a change after which a keep-alive comment is sent. */
const KEEP_ALIVE_TICKS = 15;

const forbidden = { description: "A key scoped to a user (TL_ERR_FORBIDDEN).", schema: errorSchema };
const noGateway = { description: "No gateway runs in this server (`threadline api`): TL_ERR_NOT_FOUND.", schema: errorSchema };

function sourceOf(ctx: ApiContext, request: FastifyRequest): GatewayLiveSource {
  requireAdmin(request);
  if (ctx.gatewayLive === null) {
    throw new NotFoundError("No gateway runs in this server: the live view is served by `threadline serve` only.");
  }
  return ctx.gatewayLive;
}

/** What changed between snapshots (`at` always changes). */
const changeKey = ({ at: _at, ...rest }: GatewayLiveSnapshot): string => JSON.stringify(rest);

/** The gateway resource (`/gateway/…`). */
export const gatewayRoutes: FastifyPluginAsync<ApiContext> = async (api, ctx) => {
  const { registry } = ctx;
  const streams = new Set<() => void>();
  // Shutdown ends every stream with an `end` event, so clients see a clean close.
  api.addHook("preClose", async () => {
    for (const end of [...streams]) end();
  });

  registry.add(api, {
    method: "GET",
    url: "/gateway/status",
    operationId: "getGatewayStatus",
    tag: "gateway",
    summary: "The running gateway now (admin keys only)",
    description: "One snapshot: running turns, live agents, queue depths, adapters. Served by `threadline serve` only.",
    responses: { 200: { description: "The snapshot.", schema: gatewaySnapshotSchema }, 403: forbidden, 404: noGateway },
    handler: async (request) => sourceOf(ctx, request).snapshot(),
  });

  registry.add(api, {
    method: "GET",
    url: "/gateway/live",
    operationId: "streamGatewayLive",
    tag: "gateway",
    summary: "The running gateway, live (server-sent events; admin keys only)",
    description:
      "text/event-stream: an `event: snapshot` (data: the GatewaySnapshot JSON) on connect and whenever the figures change " +
      "(checked once a second), a `: keep-alive` comment after 15 quiet seconds, and `event: end` when the server shuts down. " +
      `At most ${MAX_LIVE_STREAMS} streams at once (then 503). Served by \`threadline serve\` only.`,
    responses: {
      200: { description: "text/event-stream of snapshots.", schema: gatewaySnapshotSchema, contentType: "text/event-stream" },
      403: forbidden,
      404: noGateway,
      503: { description: "Too many live streams open (TL_ERR_UNAVAILABLE).", schema: errorSchema },
    },
    handler: async (request, reply) => {
      const source = sourceOf(ctx, request);
      if (streams.size >= MAX_LIVE_STREAMS) {
        throw new HttpError("TL_ERR_UNAVAILABLE", `At most ${MAX_LIVE_STREAMS} live streams may be open at once; close one and retry.`);
      }
      const first = await source.snapshot();
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      let last = changeKey(first);
      raw.write(`event: snapshot\ndata: ${JSON.stringify(first)}\n\n`);
      let timer: NodeJS.Timeout | null = null;
      let quiet = 0;
      let open = true;
      const end = (finalEvent: string | null): void => {
        if (!open) return;
        open = false;
        streams.delete(stop);
        if (timer !== null) clearTimeout(timer);
        if (finalEvent !== null && !raw.destroyed) raw.write(finalEvent);
        raw.end();
      };
      const stop = (): void => end("event: end\ndata: {}\n\n");
      streams.add(stop);
      raw.on("close", () => end(null));
      const tick = async (): Promise<void> => {
        timer = null;
        if (!open) return;
        try {
          const snapshot = await source.snapshot();
          if (!open) return;
          const key = changeKey(snapshot);
          if (key !== last) {
            last = key;
            quiet = 0;
            raw.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`);
          } else if (++quiet >= KEEP_ALIVE_TICKS) {
            quiet = 0;
            raw.write(": keep-alive\n\n");
          }
        } catch (error) {
          (ctx.errorLogger ?? request.log).error({ err: error, requestId: request.id }, "gateway live snapshot failed; the stream was closed");
          end(
            `event: error\ndata: ${JSON.stringify({ code: "TL_ERR_INTERNAL", message: "The live view failed; reconnect to retry.", requestId: request.id })}\n\n`,
          );
          return;
        }
        if (open) timer = setTimeout(() => void tick(), ctx.liveIntervalMs);
      };
      timer = setTimeout(() => void tick(), ctx.liveIntervalMs);
      return reply;
    },
  });
};
