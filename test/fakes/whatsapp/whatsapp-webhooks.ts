/**
 * The webhook side of the WhatsApp fake: builds notifications from the fixtures
 * ({@link whatsappWebhook}) and POSTs them to the gateway signed as Meta signs them
 * ({@link postWhatsAppWebhook}: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`).
 *
 * @module
 */
import { createHmac } from "node:crypto";
import { whatsappFixture } from "./fake-whatsapp-server.js";

let nextId = 0;

/** A fresh, unique inbound message id in the `wamid.…` form. */
export function wamid(): string {
  nextId += 1;
  return `wamid.HBgLTEST${Date.now().toString(36)}${String(nextId).padStart(6, "0")}`;
}

/** Edits of a fixture: fields of its first message, contact, status or metadata (`undefined` removes a field; `contact: null` drops `contacts`). */
export interface WhatsAppWebhookEdit {
  message?: Record<string, unknown>;
  contact?: Record<string, unknown> | null;
  status?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

function apply(target: Record<string, unknown>, edits: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(edits)) {
    if (value === undefined) delete target[key];
    else target[key] = value;
  }
}

/**
 * A notification from a fixture with its first message / contact / status edited. A message
 * gets a fresh `wamid` unless the edit names its `id`.
 *
 * @example
 * whatsappWebhook("webhook-text", { message: { from: "4915123456789", text: { body: "hi" } }, contact: { wa_id: "4915123456789" } });
 */
export function whatsappWebhook(fixture: string, edit: WhatsAppWebhookEdit = {}): Record<string, unknown> {
  const payload = whatsappFixture(fixture);
  const value = (payload["entry"] as Array<{ changes: Array<{ value: Record<string, unknown> }> }>)[0]!.changes[0]!.value;
  const messages = value["messages"] as Array<Record<string, unknown>> | undefined;
  if (messages !== undefined) {
    const message = messages[0]!;
    message["id"] = wamid();
    apply(message, edit.message ?? {});
  }
  const contacts = value["contacts"] as Array<Record<string, unknown>> | undefined;
  if (edit.contact === null) delete value["contacts"];
  else if (contacts !== undefined && edit.contact !== undefined) apply(contacts[0]!, edit.contact);
  const statuses = value["statuses"] as Array<Record<string, unknown>> | undefined;
  if (statuses !== undefined && edit.status !== undefined) apply(statuses[0]!, edit.status);
  if (edit.metadata !== undefined) apply(value["metadata"] as Record<string, unknown>, edit.metadata);
  return payload;
}

/** The first message's id of a notification built by {@link whatsappWebhook}. */
export function messageIdOf(payload: Record<string, unknown>): string {
  const value = (payload["entry"] as Array<{ changes: Array<{ value: { messages: Array<{ id: string }> } }> }>)[0]!.changes[0]!.value;
  return value.messages[0]!.id;
}

/** Meta's signature of a raw body: `sha256=<hex HMAC-SHA256(appSecret, body)>`. */
export function whatsappSignature(appSecret: string, body: string): string {
  return `sha256=${createHmac("sha256", appSecret).update(body, "utf8").digest("hex")}`;
}

/** POSTs `payload` to `url` the way Meta does: signed with `appSecret`, or with `signature` as given (`null`: no header). */
export async function postWhatsAppWebhook(
  url: string,
  payload: Record<string, unknown>,
  options: { appSecret?: string; signature?: string | null } = {},
): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "facebookexternalua" };
  const signature = options.signature !== undefined ? options.signature : options.appSecret !== undefined ? whatsappSignature(options.appSecret, body) : null;
  if (signature !== null) headers["x-hub-signature-256"] = signature;
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(20_000) });
  return { status: response.status, body: await response.text() };
}
