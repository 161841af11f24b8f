/**
 * What the gateway under test asked the fake model (test/support/fake-openai-server.ts), as
 * the end-to-end tests of the chat platforms read it: a message content's text
 * ({@link contentText}), a request's conversation ({@link dialogue}), and waiting for the
 * request a user message led to ({@link requestFor}, {@link requestMatching}).
 *
 * @module
 */
import type { FakeOpenAiRequest, FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "./gateway-process.js";

/** The text of a message content: a string as it is, the `text` of its parts joined with newlines, else "". */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("\n");
  return "";
}

/** The non-system messages of a model request as [role, text] pairs. */
export function dialogue(request: FakeOpenAiRequest): Array<[string, string]> {
  return (request.body?.messages ?? []).filter((m) => m.role !== "system").map((m) => [m.role, contentText(m.content)]);
}

/**
 * Waits for the model request whose last message's text passes `match` (counting only
 * requests from index `from` on); `what` names it in the timeout error.
 */
export function requestMatching(model: FakeOpenAiServer, match: (userText: string) => boolean, what: string, from = 0): Promise<FakeOpenAiRequest> {
  return waitFor(() => model.chatRequests().find((r) => r.index >= from && match(dialogue(r).at(-1)?.[1] ?? "")), {
    what: `the model request for ${what}`,
    describe: () => JSON.stringify(model.chatRequests().map((r) => dialogue(r).at(-1))),
  });
}

/** Waits for the model request whose last message is `userText` (counting only requests from index `from` on). */
export function requestFor(model: FakeOpenAiServer, userText: string, from = 0): Promise<FakeOpenAiRequest> {
  return requestMatching(model, (t) => t === userText, `"${userText}"`, from);
}
