/**
 * Sessions the CLI tests seed through the public API.
 *
 * @module
 */
import type { SessionDB } from "../../../src/index.js";
import { nowSeconds } from "./cli-harness.js";

/** Minutes, hours and days in seconds. */
export const MIN = 60;
export const HOUR = 3600;
export const DAY = 86_400;

/** Creates a session with one user message at `ago` seconds before now; returns its id. */
export async function addSession(
  db: SessionDB,
  {
    source = "cli",
    ago = 0,
    text,
    title,
    id,
    ended,
    model,
  }: { source?: string; ago?: number; text: string; title?: string; id?: string; ended?: boolean; model?: string },
): Promise<string> {
  const at = nowSeconds() - ago;
  const session = await db.createSession({ source, startedAt: at - 1, ...(id === undefined ? {} : { id }), ...(model === undefined ? {} : { model }) });
  await db.appendMessage(session.id, { role: "user", content: text, timestamp: at });
  if (title !== undefined) await db.setTitle(session.id, title);
  if (ended) await db.endSession(session.id, "user_exit", { endedAt: at });
  return session.id;
}

/**
 * A session with a tool-using turn: the assistant says "Let me check." and calls `terminal`,
 * then a tool-only message calls `web_search` and `terminal`, then it answers.
 */
export async function addToolSession(db: SessionDB, { id, ago = 10 * MIN }: { id?: string; ago?: number } = {}): Promise<string> {
  const t = nowSeconds() - ago;
  const session = await db.createSession({
    source: "cli",
    startedAt: t - 1,
    model: "gpt-4o",
    systemPrompt: "You are terse.",
    ...(id === undefined ? {} : { id }),
  });
  const call = (callId: string, name: string, args: string) => ({ id: callId, type: "function", function: { name, arguments: args } });
  await db.appendTurn(session.id, [
    { role: "user", content: "How do I deploy the staging server?", timestamp: t },
    { role: "assistant", content: "Let me check.", toolCalls: [call("c1", "terminal", '{"cmd":"ls deploy"}')], timestamp: t + 1 },
    { role: "tool", toolCallId: "c1", toolName: "terminal", content: "deploy.sh", timestamp: t + 2 },
    {
      role: "assistant",
      content: null,
      toolCalls: [call("c2", "web_search", '{"q":"staging deploy"}'), call("c3", "terminal", '{"cmd":"./deploy.sh"}')],
      timestamp: t + 3,
    },
    { role: "tool", toolCallId: "c2", toolName: "web_search", content: "search results", timestamp: t + 4 },
    { role: "tool", toolCallId: "c3", toolName: "terminal", content: "deployed OK", timestamp: t + 5 },
    { role: "assistant", content: "Deployment done.", timestamp: t + 6 },
  ]);
  await db.recordUsage(session.id, { inputTokens: 1200, outputTokens: 300, estimatedCostUsd: 0.0123 });
  return session.id;
}
