/**
 * WhatsApp (the Cloud API) as `threadline serve` knows it: {@link whatsappPlatform}, the
 * descriptor of `adapters.whatsapp` (zod schema, `EXPECTED` lines, the resolved
 * {@link WhatsAppConfig} with access token, app secret and verify token from the file, else
 * WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, its secret keys, its
 * problems, and a `create` that imports the adapter only when the section is configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform, fromEnv, secret } from "../chat-platform.js";
import { LINK_PREVIEWS_EXPECTED, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "../link-previews.js";

/** The environment variables WhatsApp secrets may come from. */
const WHATSAPP_ACCESS_TOKEN_ENV = "WHATSAPP_ACCESS_TOKEN";
const WHATSAPP_APP_SECRET_ENV = "WHATSAPP_APP_SECRET";
const WHATSAPP_VERIFY_TOKEN_ENV = "WHATSAPP_VERIFY_TOKEN";

/** The Graph API version used when `apiVersion` is not set. */
const WHATSAPP_DEFAULT_API_VERSION = "v26.0";

/** Shapes of the WhatsApp secrets and ids (checked on values from the file and from the environment). */
const WHATSAPP_ACCESS_TOKEN = /^[\w\-.|]{16,4096}$/u;
const WHATSAPP_APP_SECRET = /^[\w-]{16,256}$/u;
const WHATSAPP_VERIFY_TOKEN = /^[\x21-\x7e]{16,256}$/u;
const WHATSAPP_PHONE_NUMBER_ID = /^\d{1,32}$/u;

/** `adapters.whatsapp` as written in the file. */
const whatsappSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  accessToken: secret(z.string().regex(WHATSAPP_ACCESS_TOKEN)).optional(),
  appSecret: secret(z.string().regex(WHATSAPP_APP_SECRET)).optional(),
  verifyToken: secret(z.string().regex(WHATSAPP_VERIFY_TOKEN)).optional(),
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

/** `adapters.whatsapp`, resolved. */
export interface WhatsAppConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else WHATSAPP_ACCESS_TOKEN; `null` when neither has one (its problems report it). */
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

/** The WhatsApp platform: `adapters.whatsapp` and its adapter (the Graph API over HTTP, no SDK). */
export const whatsappPlatform = defineChatPlatform({
  name: "whatsapp",
  schema: whatsappSchema,
  expected: {
    accessToken: `a Graph API access token (a system user's permanent token, EAA…) with whatsapp_business_messaging (or set ${WHATSAPP_ACCESS_TOKEN_ENV})`,
    appSecret: `the Meta app's secret (App settings → Basic → App secret), 16–256 letters or digits (or set ${WHATSAPP_APP_SECRET_ENV})`,
    verifyToken: `a string you choose, 16–256 visible characters without spaces, entered again as the webhook's Verify token (or set ${WHATSAPP_VERIFY_TOKEN_ENV})`,
    phoneNumberId: "the Phone number ID of the business number (WhatsApp → API Setup), digits",
    apiUrl: "the Graph API base URL (default https://graph.facebook.com)",
    apiVersion: `the Graph API version such as ${WHATSAPP_DEFAULT_API_VERSION} (the default)`,
    webhookPath: "the route on the gateway's server Meta sends webhooks to, such as /whatsapp/webhook (the default)",
    readReceipts: 'true or false: mark each answered message as read and show "typing…" while the turn runs (default true)',
    ...CHAT_ACCESS_EXPECTED,
    ...LINK_PREVIEWS_EXPECTED,
  },
  secrets: { accessToken: true, appSecret: true, verifyToken: true },
  resolve: (section, env): WhatsAppConfig => ({
    accessToken: section.accessToken ?? fromEnv(env, WHATSAPP_ACCESS_TOKEN_ENV),
    appSecret: section.appSecret ?? fromEnv(env, WHATSAPP_APP_SECRET_ENV),
    verifyToken: section.verifyToken ?? fromEnv(env, WHATSAPP_VERIFY_TOKEN_ENV),
    phoneNumberId: section.phoneNumberId === undefined ? null : String(section.phoneNumberId),
    apiUrl: section.apiUrl ?? "https://graph.facebook.com",
    apiVersion: section.apiVersion ?? WHATSAPP_DEFAULT_API_VERSION,
    webhookPath: section.webhookPath ?? "/whatsapp/webhook",
    readReceipts: section.readReceipts ?? true,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  }),
  problems: whatsappProblems,
  async create(whatsapp, { http, logger, rules }) {
    const { WhatsAppAdapter } = await import("./index.js");
    const adapter = new WhatsAppAdapter({
      accessToken: whatsapp.accessToken!,
      appSecret: whatsapp.appSecret!,
      verifyToken: whatsapp.verifyToken!,
      phoneNumberId: whatsapp.phoneNumberId!,
      apiUrl: whatsapp.apiUrl,
      apiVersion: whatsapp.apiVersion,
      webhookPath: whatsapp.webhookPath,
      readReceipts: whatsapp.readReceipts,
      linkPreviews: whatsapp.linkPreviews,
      rules,
      logger,
    });
    adapter.routes(http);
    return adapter;
  },
  webhookReceiver: () => "adapters.whatsapp",
});

/** What is missing or inconsistent in `adapters.whatsapp` (empty: ready). */
function whatsappProblems(whatsapp: WhatsAppConfig): string[] {
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
