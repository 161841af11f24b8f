/**
 * The model provider of the streaming and model-delay phases, in its own process: the fake
 * OpenAI-compatible server of the tests (test/support/fake-openai-server.ts), streaming every
 * reply one word per chunk (argv: first-token ms, gap ms, words, reply kind).
 *
 * - `words` (default): every chat reply is `words` words; the first word goes out after
 *   `firstTokenMs`, the others `tokenGapMs` apart. An unstreamed request gets the whole reply
 *   when the last word would have gone out.
 * - `echo`: the reply is `Echo: <the last user message>` (what the built-in echo agent says,
 *   so the driver checks every reply as before), whole after `firstTokenMs` (the model delay);
 *   `tokenGapMs` and `words` are ignored.
 *
 * An optional fifth argument sets the server's keep-alive timeout in ms (Node's default, 5 s,
 * unless given): the model-delay phase passes a long one, see KEEP_ALIVE_NOTE in model-delay.ts.
 *
 * Prints `{"url":"http://127.0.0.1:<port>/v1"}` on stdout once listening; SIGTERM stops it.
 */
import http, { type Server } from "node:http";
import { syncBuiltinESMExports } from "node:module";

const argv = process.argv.slice(2);
const keepAliveMs = argv[4] === undefined ? null : Number(argv[4]);
if (keepAliveMs !== null) {
  // The fake server of the tests creates its own http.Server: set the timeout on it as it is made.
  const createServer = http.createServer;
  http.createServer = ((...args: Parameters<typeof createServer>): Server => {
    const server = createServer(...args);
    server.keepAliveTimeout = keepAliveMs;
    return server;
  }) as typeof createServer;
  syncBuiltinESMExports();
}
const { fakeTextReply, messageText, startFakeOpenAiServer } = await import("../../test/support/fake-openai-server.js");

const [firstTokenMs = 100, tokenGapMs = 10, words = 32] = argv.slice(0, 3).map(Number);
const echo = argv[3] === "echo";
const text = Array.from({ length: words }, (_, i) => `word${i + 1}`).join(" ");

const server = await startFakeOpenAiServer({
  streamTokens: !echo,
  tokenDelayMs: echo ? 0 : tokenGapMs,
  delayMs: firstTokenMs,
  title: null,
  script: (request) => {
    if (request.kind !== "chat" || !Array.isArray(request.body?.messages)) return null;
    const fields = { messages: request.body.messages, model: String(request.body.model ?? "bench-model") };
    if (echo) {
      const lastUser = [...request.body.messages].reverse().find((m) => m.role === "user");
      return fakeTextReply(`Echo: ${lastUser === undefined ? "" : messageText(lastUser.content)}`, fields);
    }
    const reply = fakeTextReply(text, fields);
    // Unstreamed, the reply comes when the last word would have: a model generates at one pace either way.
    return request.body.stream === true ? reply : { ...reply, delayMs: firstTokenMs + (words - 1) * tokenGapMs };
  },
});
// The fake records every request (for the tests); a long run must not keep them all.
setInterval(() => server.requests.splice(0), 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
