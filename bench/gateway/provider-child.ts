/**
 * The model provider of the streaming phase, in its own process: the fake OpenAI-compatible
 * server of the tests (test/support/fake-openai-server.ts), streaming every reply one word
 * per chunk. Every chat reply is `words` words; the first word goes out after
 * `firstTokenMs`, the others `tokenGapMs` apart (argv: first-token ms, gap ms, words). An
 * unstreamed request gets the whole reply when the last word would have gone out.
 * Prints `{"url":"http://127.0.0.1:<port>/v1"}` on stdout once listening; SIGTERM stops it.
 */
import { fakeTextReply, startFakeOpenAiServer } from "../../test/support/fake-openai-server.js";

const [firstTokenMs = 100, tokenGapMs = 10, words = 32] = process.argv.slice(2).map(Number);
const text = Array.from({ length: words }, (_, i) => `word${i + 1}`).join(" ");

const server = await startFakeOpenAiServer({
  streamTokens: true,
  tokenDelayMs: tokenGapMs,
  delayMs: firstTokenMs,
  title: null,
  script: (request) => {
    if (request.kind !== "chat" || !Array.isArray(request.body?.messages)) return null;
    const reply = fakeTextReply(text, { messages: request.body.messages, model: String(request.body.model ?? "bench-model") });
    // Unstreamed, the reply comes when the last word would have: a model generates at one pace either way.
    return request.body.stream === true ? reply : { ...reply, delayMs: firstTokenMs + (words - 1) * tokenGapMs };
  },
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
