/**
 * `adapters.whatsapp` (the WhatsApp Cloud API): its zod schema, `EXPECTED` lines, resolved
 * {@link WhatsAppConfig} (access token, app secret and verify token from the file, else
 * WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN), {@link whatsappProblems}
 * (what `chatAdapterProblems` reports for it) and {@link WHATSAPP_SECRET_KEYS}.
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";
import { linkPreviewsExpected, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "./link-previews.js";

/** The environment variables WhatsApp secrets may come from. */
export const WHATSAPP_ACCESS_TOKEN_ENV = "WHATSAPP_ACCESS_TOKEN";
export const WHATSAPP_APP_SECRET_ENV = "WHATSAPP_APP_SECRET";
export const WHATSAPP_VERIFY_TOKEN_ENV = "WHATSAPP_VERIFY_TOKEN";

/** The Graph API version used when `apiVersion` is not set. */
export const WHATSAPP_DEFAULT_API_VERSION = "v26.0";

/** Shapes of the WhatsApp secrets and ids (checked on values from the file and from the environment). */
const WHATSAPP_ACCESS_TOKEN = /^[\w\-.|]{16,4096}$/u;
const WHATSAPP_APP_SECRET = /^[\w-]{16,256}$/u;
const WHATSAPP_VERIFY_TOKEN = /^[\x21-\x7e]{16,256}$/u;
const WHATSAPP_PHONE_NUMBER_ID = /^\d{1,32}$/u;

/** `adapters.whatsapp` as written in the file. */
export const whatsappSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  accessToken: z.string().regex(WHATSAPP_ACCESS_TOKEN).optional(),
  appSecret: z.string().regex(WHATSAPP_APP_SECRET).optional(),
  verifyToken: z.string().regex(WHATSAPP_VERIFY_TOKEN).optional(),
  // YAML reads an unquoted id as a number: both are taken.
  phoneNumberId: z.union([z.string().regex(WHATSAPP_PHONE_NUMBER_ID), z.number().int().nonnegative()]).optional(),
  apiUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  apiVersion: z
    .string()
    .regex(/^v\d{1,3}\.\d{1,3}$/u)
    .optional(),
  webhookPath: z
    .string()
    .regex(/^\/[\w\-/.]*$/u)
    .optional(),
  readReceipts: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.whatsapp`. */
export const WHATSAPP_EXPECTED: Record<string, string> = {
  "adapters.whatsapp.accessToken": `a Graph API access token (a system user's permanent token, EAA…) with whatsapp_business_messaging (or set ${WHATSAPP_ACCESS_TOKEN_ENV})`,
  "adapters.whatsapp.appSecret": `the Meta app's secret (App settings → Basic → App secret), 16–256 letters or digits (or set ${WHATSAPP_APP_SECRET_ENV})`,
  "adapters.whatsapp.verifyToken": `a string you choose, 16–256 visible characters without spaces, entered again as the webhook's Verify token (or set ${WHATSAPP_VERIFY_TOKEN_ENV})`,
  "adapters.whatsapp.phoneNumberId": "the Phone number ID of the business number (WhatsApp → API Setup), digits",
  "adapters.whatsapp.apiUrl": "the Graph API base URL (default https://graph.facebook.com)",
  "adapters.whatsapp.apiVersion": `the Graph API version such as ${WHATSAPP_DEFAULT_API_VERSION} (the default)`,
  "adapters.whatsapp.webhookPath": "the route on the gateway's server Meta sends webhooks to, such as /whatsapp/webhook (the default)",
  "adapters.whatsapp.readReceipts": 'true or false: mark each answered message as read and show "typing…" while the turn runs (default true)',
  ...chatAccessExpected("whatsapp"),
  ...linkPreviewsExpected("whatsapp"),
};

/** `adapters.whatsapp`, resolved. */
export interface WhatsAppConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else WHATSAPP_ACCESS_TOKEN; `null` when neither has one ({@link whatsappProblems} reports it). */
  accessToken: string | null;
  /** From the file, else WHATSAPP_APP_SECRET: the key of the `X-Hub-Signature-256` HMAC. */
  appSecret: string | null;
  /** From the file, else WHATSAPP_VERIFY_TOKEN: answered in the GET verification handshake. */
  verifyToken: string | null;
  phoneNumberId: string | null;
  apiUrl: string;
  apiVersion: string;
  webhookPath: string;
  readReceipts: boolean;
}

/** Resolves `adapters.whatsapp` (`null`: not configured or `enabled: false`). */
export function resolveWhatsAppConfig(section: z.infer<typeof whatsappSchema> | undefined, env: NodeJS.ProcessEnv): WhatsAppConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  return {
    accessToken: section.accessToken ?? fromEnv(WHATSAPP_ACCESS_TOKEN_ENV),
    appSecret: section.appSecret ?? fromEnv(WHATSAPP_APP_SECRET_ENV),
    verifyToken: section.verifyToken ?? fromEnv(WHATSAPP_VERIFY_TOKEN_ENV),
    phoneNumberId: section.phoneNumberId === undefined ? null : String(section.phoneNumberId),
    apiUrl: section.apiUrl ?? "https://graph.facebook.com",
    apiVersion: section.apiVersion ?? WHATSAPP_DEFAULT_API_VERSION,
    webhookPath: section.webhookPath ?? "/whatsapp/webhook",
    readReceipts: section.readReceipts ?? true,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  };
}

/** The `adapters.whatsapp` keys whose values are secrets (never shown in errors or `config show`). */
export const WHATSAPP_SECRET_KEYS: readonly string[] = ["adapters.whatsapp.accessToken", "adapters.whatsapp.appSecret", "adapters.whatsapp.verifyToken"];

/** What is missing or inconsistent in `adapters.whatsapp` (empty: ready, or not configured). */
export function whatsappProblems(whatsapp: WhatsAppConfig | null | undefined): string[] {
  if (whatsapp === null || whatsapp === undefined) return [];
  const problems: string[] = [];
  if (whatsapp.accessToken === null) {
    problems.push(
      `adapters.whatsapp.accessToken: missing: set it in the config file or in the ${WHATSAPP_ACCESS_TOKEN_ENV} environment variable (Meta Business Suite → System users → Generate token, with whatsapp_business_messaging)`,
    );
  } else if (!WHATSAPP_ACCESS_TOKEN.test(whatsapp.accessToken)) {
    problems.push(
      `adapters.whatsapp.accessToken: ${WHATSAPP_ACCESS_TOKEN_ENV} does not look like an access token (16 or more letters, digits, '_', '-', '.' or '|')`,
    );
  }
  if (whatsapp.appSecret === null) {
    problems.push(
      `adapters.whatsapp.appSecret: missing: every webhook POST is checked against it (X-Hub-Signature-256), so set it in the config file or in ${WHATSAPP_APP_SECRET_ENV} (App settings → Basic → App secret)`,
    );
  } else if (!WHATSAPP_APP_SECRET.test(whatsapp.appSecret)) {
    problems.push(`adapters.whatsapp.appSecret: ${WHATSAPP_APP_SECRET_ENV} does not look like an app secret (16–256 letters or digits)`);
  }
  if (whatsapp.verifyToken === null) {
    problems.push(
      `adapters.whatsapp.verifyToken: missing: Meta's webhook verification (GET with hub.verify_token) needs it, so choose a string, set it in the config file or in ${WHATSAPP_VERIFY_TOKEN_ENV}, and enter the same string as the Verify token`,
    );
  } else if (!WHATSAPP_VERIFY_TOKEN.test(whatsapp.verifyToken)) {
    problems.push(`adapters.whatsapp.verifyToken: ${WHATSAPP_VERIFY_TOKEN_ENV} must be 16–256 visible characters without spaces`);
  }
  if (whatsapp.phoneNumberId === null) {
    problems.push(
      "adapters.whatsapp.phoneNumberId: missing: the Phone number ID of the business number (App Dashboard → WhatsApp → API Setup), the id replies are sent from",
    );
  }
  return problems;
}
