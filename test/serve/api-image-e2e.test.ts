/**
 * An image from an API client, end to end through a real `threadline serve` process: the
 * official `openai` npm client sends a user message with a text part and an `image_url` part
 * (a base64 `data:` URL) to `/v1/chat/completions`; the gateway stores the image with the
 * session (the API serves the same bytes back) and the fake OpenAI-compatible provider behind
 * it receives an `image_url` part whose data URL carries exactly those bytes. An `http(s)`
 * URL is refused with a 400 through the same client, and nothing is stored for it.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { PNG_BYTES, sha256Of } from "../http-api/attachment-fixtures.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, withDatabase } from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-openai-images";
const TOKEN = "serve-token-images-0123456789";
const API_KEY = "admin-key-images-0123456789";

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** The data URLs of every image_url part of a chat request's messages. */
function imageUrls(messages: unknown): string[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m: { content?: unknown }) =>
    Array.isArray(m.content)
      ? m.content.filter((p: { type?: unknown }) => p.type === "image_url").map((p: { image_url?: { url?: string } }) => p.image_url?.url ?? "")
      : [],
  );
}

describe("threadline serve: image parts from API clients", () => {
  it(
    "stores a data: URL image with the session and passes the same bytes to the provider as an image_url part; refuses an http URL",
    async () => {
      const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-vision"] });
      fakes.push(fake);
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { tokens: [TOKEN] } },
        api: { enabled: true, keys: [{ key: API_KEY }] },
      });
      const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-vision" } });
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: TOKEN, defaultHeaders: { "X-Threadline-Session-Key": "pictures" }, maxRetries: 0 });

      const dataUrl = `data:image/png;base64,${PNG_BYTES.toString("base64")}`;
      const { data, response } = await client.chat.completions
        .create({
          model: "threadline",
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "What is in this picture?" },
                { type: "image_url", image_url: { url: dataUrl } },
              ],
            },
          ],
        })
        .withResponse();
      expect(data.choices[0]!.message.content).not.toBe("");
      const sessionId = response.headers.get("x-threadline-session-id")!;

      // The provider got the picture: an image_url part whose data URL decodes to the same bytes.
      const chats = fake.requests.filter((r) => r.kind === "chat");
      expect(chats).toHaveLength(1);
      const urls = imageUrls(chats[0]!.body?.messages);
      expect(urls).toHaveLength(1);
      const sent = /^data:image\/png;base64,(.+)$/u.exec(urls[0]!);
      expect(sent).not.toBeNull();
      expect(Buffer.from(sent![1]!, "base64")).toEqual(PNG_BYTES);

      // The session keeps it: an attachment part, and the API serves the same bytes.
      const sha256 = sha256Of(PNG_BYTES);
      const attachments = await withDatabase(home, (db) => db.listAttachments(sessionId));
      expect(attachments).toMatchObject([{ sha256, kind: "image", mimeType: "image/png", size: PNG_BYTES.length, stored: true }]);
      const served = await fetch(`${gateway.url}/sessions/${sessionId}/attachments/${sha256}`, { headers: { "x-api-key": API_KEY } });
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG_BYTES);

      // An http URL: a 400 the official client raises as BadRequestError; the provider is not asked.
      const refused = await client.chat.completions
        .create({ model: "threadline", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://127.0.0.1:9/cat.png" } }] }] })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(
        "image_url must be a data: URL (base64); Threadline never fetches URLs named in a message.",
      );
      expect(fake.requests.filter((r) => r.kind === "chat")).toHaveLength(1);
    },
    TEST_TIMEOUT,
  );
});
