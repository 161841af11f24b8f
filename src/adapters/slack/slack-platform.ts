/**
 * Slack as `threadline serve` knows it: {@link slackPlatform}, the descriptor of
 * `adapters.slack` (zod schema, `EXPECTED` lines, the resolved {@link SlackConfig} with bot
 * token, signing secret and app token from the file, else SLACK_BOT_TOKEN,
 * SLACK_SIGNING_SECRET, SLACK_APP_TOKEN, its secret keys, its problems, and a `create` that
 * imports the adapter, and so Bolt, only when the section is configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform, fromEnv, secret } from "../chat-platform.js";
import { LINK_PREVIEWS_EXPECTED, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "../link-previews.js";

/** The environment variables Slack secrets may come from. */
const SLACK_BOT_TOKEN_ENV = "SLACK_BOT_TOKEN";
const SLACK_SIGNING_SECRET_ENV = "SLACK_SIGNING_SECRET";
const SLACK_APP_TOKEN_ENV = "SLACK_APP_TOKEN";

/** `adapters.slack` as written in the file. */
const slackSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  botToken: secret(z.string().regex(/^xox[bp]-[\w-]+$/u)).optional(),
  signingSecret: secret(z.string().regex(/^[\w-]{8,256}$/u)).optional(),
  appToken: secret(z.string().regex(/^xapp-[\w-]+$/u)).optional(),
  mode: z.enum(["events", "socket"]).optional(),
  eventsPath: z
    .string()
    .regex(/^\/[\w\-/.]*$/u)
    .optional(),
  apiUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  assistantStatus: z.boolean().optional(),
});

/** `adapters.slack`, resolved. */
export interface SlackConfig extends ChatAccess, LinkPreviewsConfig {
  /** From the file, else SLACK_BOT_TOKEN; `null` when neither has one. */
  botToken: string | null;
  /** From the file, else SLACK_SIGNING_SECRET. */
  signingSecret: string | null;
  /** From the file, else SLACK_APP_TOKEN. */
  appToken: string | null;
  mode: "events" | "socket";
  eventsPath: string;
  apiUrl: string | null;
  assistantStatus: boolean;
}

/** The Slack platform: `adapters.slack` and its adapter (Bolt, loaded by `create` only). */
export const slackPlatform = defineChatPlatform({
  name: "slack",
  schema: slackSchema,
  expected: {
    botToken: `the bot token xoxb-… from the app's OAuth & Permissions page (or set ${SLACK_BOT_TOKEN_ENV})`,
    signingSecret: `the app's signing secret from Basic Information, 8–256 letters or digits (or set ${SLACK_SIGNING_SECRET_ENV})`,
    appToken: `an app-level token xapp-… with connections:write, for Socket Mode (or set ${SLACK_APP_TOKEN_ENV})`,
    mode: "events (the Events API over HTTP, the default without an app token) or socket (Socket Mode, the default with one)",
    eventsPath: "the route on the gateway's server Slack sends events to, such as /slack/events (the default)",
    apiUrl: "the Web API base URL (default https://slack.com/api/)",
    assistantStatus: 'true or false: show "is thinking…" in threads with assistant.threads.setStatus while a turn runs (AI apps; default false)',
    ...CHAT_ACCESS_EXPECTED,
    ...LINK_PREVIEWS_EXPECTED,
  },
  secrets: { botToken: true, signingSecret: true, appToken: true },
  resolve(section, env): SlackConfig {
    const appToken = section.appToken ?? fromEnv(env, SLACK_APP_TOKEN_ENV);
    return {
      botToken: section.botToken ?? fromEnv(env, SLACK_BOT_TOKEN_ENV),
      signingSecret: section.signingSecret ?? fromEnv(env, SLACK_SIGNING_SECRET_ENV),
      appToken,
      mode: section.mode ?? (appToken !== null ? "socket" : "events"),
      eventsPath: section.eventsPath ?? "/slack/events",
      apiUrl: section.apiUrl ?? null,
      assistantStatus: section.assistantStatus ?? false,
      ...resolveChatAccess(section),
      ...resolveLinkPreviews(section),
    };
  },
  problems: slackProblems,
  async create(slack, { http, logger, rules }) {
    const { SlackAdapter } = await import("./index.js");
    const adapter = await SlackAdapter.create({
      botToken: slack.botToken!,
      signingSecret: slack.signingSecret,
      appToken: slack.mode === "socket" ? slack.appToken : null,
      eventsPath: slack.eventsPath,
      apiUrl: slack.apiUrl,
      assistantStatus: slack.assistantStatus,
      linkPreviews: slack.linkPreviews,
      rules,
      logger,
    });
    adapter.routes(http);
    return adapter;
  },
  webhookReceiver: (slack) => (slack.mode === "events" ? "adapters.slack (events mode)" : null),
});

/** What is missing or inconsistent in `adapters.slack` (empty: ready). */
function slackProblems(slack: SlackConfig): string[] {
  const problems: string[] = [];
  if (slack.botToken === null) {
    problems.push(
      `adapters.slack.botToken: missing: set it in the config file or in the ${SLACK_BOT_TOKEN_ENV} environment variable (the xoxb- token on the app's OAuth & Permissions page)`,
    );
  } else if (!/^xox[bp]-[\w-]+$/u.test(slack.botToken)) {
    problems.push(`adapters.slack.botToken: ${SLACK_BOT_TOKEN_ENV} does not look like a Slack bot token (xoxb- followed by letters, digits or '-')`);
  }
  if (slack.mode === "events") {
    if (slack.signingSecret === null) {
      problems.push(
        `adapters.slack.signingSecret: missing: the Events API needs it (set it in the config file or in ${SLACK_SIGNING_SECRET_ENV}: Basic Information → Signing Secret), or use Socket Mode with an appToken`,
      );
    } else if (!/^[\w-]{8,256}$/u.test(slack.signingSecret)) {
      problems.push(`adapters.slack.signingSecret: ${SLACK_SIGNING_SECRET_ENV} does not look like a signing secret (8–256 letters or digits)`);
    }
  } else if (slack.appToken === null) {
    problems.push(
      `adapters.slack.appToken: missing: Socket Mode needs an app-level token xapp-… with connections:write (set it in the config file or in ${SLACK_APP_TOKEN_ENV})`,
    );
  } else if (!/^xapp-[\w-]+$/u.test(slack.appToken)) {
    problems.push(`adapters.slack.appToken: ${SLACK_APP_TOKEN_ENV} does not look like an app-level token (xapp- followed by letters, digits or '-')`);
  }
  return problems;
}
