/**
 * `adapters.slack`: its zod schema, `EXPECTED` lines, resolved {@link SlackConfig} (bot
 * token, signing secret and app token from the file, else SLACK_BOT_TOKEN,
 * SLACK_SIGNING_SECRET, SLACK_APP_TOKEN), {@link slackProblems} (what `chatAdapterProblems`
 * reports for it) and {@link SLACK_SECRET_KEYS}.
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";
import { linkPreviewsExpected, linkPreviewsShape, resolveLinkPreviews, type LinkPreviewsConfig } from "./link-previews.js";

/** The environment variables Slack secrets may come from. */
export const SLACK_BOT_TOKEN_ENV = "SLACK_BOT_TOKEN";
export const SLACK_SIGNING_SECRET_ENV = "SLACK_SIGNING_SECRET";
export const SLACK_APP_TOKEN_ENV = "SLACK_APP_TOKEN";

/** `adapters.slack` as written in the file. */
export const slackSchema = z.strictObject({
  ...chatAccessShape,
  ...linkPreviewsShape,
  botToken: z
    .string()
    .regex(/^xox[bp]-[\w-]+$/u)
    .optional(),
  signingSecret: z
    .string()
    .regex(/^[\w-]{8,256}$/u)
    .optional(),
  appToken: z
    .string()
    .regex(/^xapp-[\w-]+$/u)
    .optional(),
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

/** The `EXPECTED` lines of `adapters.slack`. */
export const SLACK_EXPECTED: Record<string, string> = {
  "adapters.slack.botToken": `the bot token xoxb-… from the app's OAuth & Permissions page (or set ${SLACK_BOT_TOKEN_ENV})`,
  "adapters.slack.signingSecret": `the app's signing secret from Basic Information, 8–256 letters or digits (or set ${SLACK_SIGNING_SECRET_ENV})`,
  "adapters.slack.appToken": `an app-level token xapp-… with connections:write, for Socket Mode (or set ${SLACK_APP_TOKEN_ENV})`,
  "adapters.slack.mode": "events (the Events API over HTTP, the default without an app token) or socket (Socket Mode, the default with one)",
  "adapters.slack.eventsPath": "the route on the gateway's server Slack sends events to, such as /slack/events (the default)",
  "adapters.slack.apiUrl": "the Web API base URL (default https://slack.com/api/)",
  "adapters.slack.assistantStatus": 'true or false: show "is thinking…" in threads with assistant.threads.setStatus while a turn runs (AI apps; default false)',
  ...chatAccessExpected("slack"),
  ...linkPreviewsExpected("slack"),
};

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

/** Resolves `adapters.slack` (`null`: not configured or `enabled: false`). */
export function resolveSlackConfig(section: z.infer<typeof slackSchema> | undefined, env: NodeJS.ProcessEnv): SlackConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  const appToken = section.appToken ?? fromEnv(SLACK_APP_TOKEN_ENV);
  return {
    botToken: section.botToken ?? fromEnv(SLACK_BOT_TOKEN_ENV),
    signingSecret: section.signingSecret ?? fromEnv(SLACK_SIGNING_SECRET_ENV),
    appToken,
    mode: section.mode ?? (appToken !== null ? "socket" : "events"),
    eventsPath: section.eventsPath ?? "/slack/events",
    apiUrl: section.apiUrl ?? null,
    assistantStatus: section.assistantStatus ?? false,
    ...resolveChatAccess(section),
    ...resolveLinkPreviews(section),
  };
}

/** The `adapters.slack` keys whose values are secrets (never shown in errors or `config show`). */
export const SLACK_SECRET_KEYS: readonly string[] = ["adapters.slack.botToken", "adapters.slack.signingSecret", "adapters.slack.appToken"];

/** What is missing or inconsistent in `adapters.slack` (empty: ready, or not configured). */
export function slackProblems(slack: SlackConfig | null): string[] {
  if (slack === null) return [];
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
