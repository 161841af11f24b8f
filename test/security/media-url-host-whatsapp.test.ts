/**
 * Threat (issue 30): a media download sends the WhatsApp access token somewhere else, or
 * fetches a URL someone else chose. The Graph API's media endpoint answers with the `url` to
 * download a file from, and that download carries `Authorization: Bearer <token>`; a webhook
 * carries a `url` too. If the adapter fetched whatever URL it was handed (or followed a
 * redirect), an answer or a payload naming another host would get the token, or make the
 * gateway fetch an attacker's URL.
 *
 * The WhatsApp adapter against its local fake Graph API and a "trap" server on another origin
 * that records every request: a media URL on the trap's origin, a download that redirects to
 * the trap, and a webhook naming the trap as the media `url` — the trap sees no request at all.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { WhatsAppAdapter, mapWhatsAppMessage, type WhatsAppChangeValue } from "../../src/adapters/whatsapp/index.js";
import type { FetchedMedia, SessionSource } from "../../src/gateway/index.js";
import { TEST_RULES, useCleanups } from "../adapters/adapter-harness.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";

const IMAGE_ID = "1003383421387256";
const BYTES = Buffer.from("\x89PNG\r\n\x1a\nthe image bytes", "latin1");
const SOURCE: SessionSource = { platform: "whatsapp", chatType: "dm", chatId: "16505551234", userId: "16505551234" };

const cleanups = useCleanups();

/** A server on another origin that records every request made to it (with its headers). */
async function startTrap(): Promise<{ url: string; hits: IncomingMessage["headers"][] }> {
  const hits: IncomingMessage["headers"][] = [];
  const server = createServer((req, res) => {
    hits.push(req.headers);
    res.writeHead(200, { "content-type": "image/png" }).end(BYTES);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  // `localhost` is another origin than the fake's `127.0.0.1`, on the same machine.
  return { url: `http://localhost:${(server.address() as AddressInfo).port}`, hits };
}

async function setup() {
  const fake = await startFakeWhatsAppServer();
  cleanups.push(() => fake.close());
  const adapter = new WhatsAppAdapter({
    accessToken: fake.accessToken,
    appSecret: "a1b2c3d4e5f60718293a4b5c6d7e8f90",
    verifyToken: "verify-me-please-0001",
    phoneNumberId: FAKE_PHONE_NUMBER_ID,
    apiUrl: fake.url,
    rules: TEST_RULES,
  });
  return { fake, adapter, trap: await startTrap() };
}

async function read(fetched: FetchedMedia): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of fetched.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const request = () => ({ source: SOURCE, maxBytes: 1_000_000, signal: AbortSignal.timeout(20_000) });

it("a media URL on another origin is never fetched (the token stays home)", async () => {
  const { fake, adapter, trap } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: BYTES, mimeType: "image/png", url: `${trap.url}/whatsapp_business/attachments/?mid=${IMAGE_ID}` });
  const error = (await adapter
    .fetchMedia({ kind: "image", fileId: IMAGE_ID }, request())
    .then(read)
    .catch((e: unknown) => e)) as Error;
  expect(error).toBeInstanceOf(Error);
  expect(error.message).toMatch(/outside the media host .*not fetched/u);
  expect(error.message).not.toContain(fake.accessToken);
  expect(trap.hits).toEqual([]);
});

it("a download that redirects to another origin is not followed", async () => {
  const { fake, adapter, trap } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: BYTES, mimeType: "image/png", redirectTo: `${trap.url}/stolen` });
  await expect(adapter.fetchMedia({ kind: "image", fileId: IMAGE_ID }, request()).then(read)).rejects.toThrow();
  expect(fake.downloads).toEqual([{ mediaId: IMAGE_ID, authorized: true, status: 200 }]);
  expect(trap.hits).toEqual([]);
});

it("the url a webhook names is never taken: the file is fetched by its media id from the Graph API", async () => {
  const { fake, adapter, trap } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: BYTES, mimeType: "image/png" });
  const payload = whatsappWebhook("webhook-image", {
    message: { image: { id: IMAGE_ID, mime_type: "image/png", url: `${trap.url}/whatsapp_business/attachments/?mid=${IMAGE_ID}` } },
  });
  const value = (payload["entry"] as Array<{ changes: Array<{ value: WhatsAppChangeValue }> }>)[0]!.changes[0]!.value;
  const mapped = mapWhatsAppMessage(value.messages![0]!, value)!;
  const media = mapped.inbound.media![0]!;
  expect(media.url).toBeNull();
  expect((await read(await adapter.fetchMedia(media, request()))).equals(BYTES)).toBe(true);
  expect(trap.hits).toEqual([]);
});
