/**
 * The Events API side of the Slack fake: builds `event_callback` envelopes from the
 * fixtures ({@link slackEvent}) and POSTs them to the gateway signed as Slack signs them
 * ({@link postSlackEvent}: `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<timestamp>:<body>")>`
 * with `X-Slack-Request-Timestamp`, and `X-Slack-Retry-Num`/`-Reason` for a resend).
 *
 * @module
 */
import { createHmac } from "node:crypto";
import { slackFixture } from "./fake-slack-server.js";

let nextEvent = 100;
let nextTs = 0;

/** A fresh, increasing message `ts` (`<now seconds>.<6 digits>`). */
export function slackTs(): string {
  nextTs += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(nextTs).padStart(6, "0")}`;
}

/**
 * An envelope from a fixture with fields of its `event` replaced (`text`, `ts`, `user`,
 * `channel`, `thread_ts`, …; `undefined` removes a field) and a fresh `event_id`.
 */
export function slackEvent(fixture: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const envelope = slackFixture(fixture);
  const event = envelope["event"] as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete event[key];
    else event[key] = value;
  }
  if (overrides["ts"] !== undefined && overrides["event_ts"] === undefined) event["event_ts"] = overrides["ts"];
  nextEvent += 1;
  envelope["event_id"] = `Ev${String(nextEvent).padStart(10, "0")}`;
  return envelope;
}

/** Slack's request signature of `body` at `timestamp` (seconds). */
export function slackSignature(signingSecret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`, "utf8").digest("hex")}`;
}

/** Options of {@link postSlackEvent}. */
export interface PostSlackEventOptions {
  /** Sign with this secret (omit to send the request unsigned). */
  signingSecret?: string;
  /** The request timestamp (default now, in seconds). */
  timestamp?: number;
  /** A resend: `X-Slack-Retry-Num` (and `X-Slack-Retry-Reason: http_timeout`). */
  retryNum?: number;
}

/** POSTs `payload` (JSON) to `url` the way Slack does; resolves with the status and body text. */
export async function postSlackEvent(
  url: string,
  payload: Record<string, unknown>,
  options: PostSlackEventOptions = {},
): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(payload);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)" };
  if (options.signingSecret !== undefined) {
    headers["x-slack-request-timestamp"] = String(timestamp);
    headers["x-slack-signature"] = slackSignature(options.signingSecret, timestamp, body);
  }
  if (options.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(options.retryNum);
    headers["x-slack-retry-reason"] = "http_timeout";
  }
  const response = await fetch(url, { method: "POST", headers, body });
  return { status: response.status, body: await response.text() };
}
