/**
 * Threat (issue 30): a message names a URL of the attacker's and the gateway fetches it (SSRF
 * from inside the network, or a tracking pixel that tells the attacker the bot's address).
 * Discord attachments are downloaded only from Discord's CDN (`cdn.discordapp.com`,
 * `media.discordapp.net`, or the configured `cdnUrl`: the fake in tests), so an attachment URL
 * on any other host is refused before a request is made.
 *
 * The REAL discord.js against the local fake, in process and in a real `threadline serve` child;
 * the attacker's host is a second loopback server that records every request it gets.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { DiscordAdapter } from "../../src/adapters/discord/index.js";
import type { InboundMessage } from "../../src/gateway/index.js";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapters/adapter-harness.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor } from "../serve/gateway-process.js";

const cleanups = useCleanups();

/** The attacker's host: a loopback server that answers with an image and records every request's path. */
async function attackerHost(): Promise<{ requests: string[]; url: (path: string) => string }> {
  const requests: string[] = [];
  const evil: Server = createServer((req, res) => {
    requests.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" }).end("stolen");
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => evil.close(resolve)));
  const port = (evil.address() as AddressInfo).port;
  return { requests, url: (path) => `http://127.0.0.1:${port}${path}` };
}

it("a Discord attachment whose URL is not on Discord's CDN is never fetched", async () => {
  const { requests: attacker, url } = await attackerHost();
  const evilUrl = url(`/attachments/${DISCORD_IDS.dm}/1600000000000000999/cat.png?ex=1&is=2&hm=3`);

  const fake = await startFakeDiscordServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await DiscordAdapter.create({ token: fake.token, apiUrl: fake.url, cdnUrl: fake.cdnUrl, rules: TEST_RULES, logger });
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: `agent:main:discord:dm:${DISCORD_IDS.dm}` };
  });
  cleanups.push(() => adapter.disconnect());

  const planted = { ...fake.addAttachment(Buffer.from("real bytes")), url: evilUrl, proxy_url: evilUrl };
  fake.pushMessage(discordMessage("message-attachment", { id: "1500000000000000499", attachments: [planted] }));
  await fake.waitFor(() => received.length === 1, "the message handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media.url).toBe(evilUrl);

  const refused = await adapter.fetchMedia(media, { source: received[0]!.source, maxBytes: 20_971_520, signal: new AbortController().signal }).then(
    () => null,
    (error: unknown) => error as Error,
  );
  expect(refused?.message).toBe("discord: the attachment's URL is not on Discord's CDN, so it was not downloaded");
  expect(attacker).toHaveLength(0);
  expect(logger.text()).not.toContain(fake.token);
});

it("through threadline serve: the planted attachment is not kept (the chat is told), the text goes through, the attacker's host gets no request", async () => {
  cleanups.push(cleanupProcesses);
  const attacker = await attackerHost();
  const evilUrl = attacker.url(`/attachments/${DISCORD_IDS.dm}/1600000000000000998/cat.png?ex=1&is=2&hm=3`);
  const fake = await startFakeDiscordServer();
  const model = await startFakeOpenAiServer({ apiKey: "sk-fake-media-host", title: null });
  cleanups.push(
    () => fake.close(),
    () => model.close(),
  );
  const home = await makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, discord: { apiUrl: fake.url, cdnUrl: fake.cdnUrl, access: "open" } },
  });
  const gateway = await spawnGateway({
    home,
    env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-fake-media-host", THREADLINE_MODEL: "fake-model", DISCORD_BOT_TOKEN: fake.token },
  });
  await waitFor(() => fake.connected || null, { what: "the gateway connected to the fake Discord", describe: () => gateway.output() });
  const planted = { ...fake.addAttachment(Buffer.from("real bytes")), url: evilUrl, proxy_url: evilUrl };
  fake.pushMessage(discordMessage("message-attachment", { id: "1500000000000000498", content: "look at my cat", attachments: [planted] }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm).some((m) => m.content.startsWith("Reply to")), "the reply to the text");
  expect(fake.sentTo(DISCORD_IDS.dm).some((m) => /not kept/u.test(m.content))).toBe(true);
  expect(JSON.stringify(model.requests.filter((r) => r.kind === "chat").at(-1)!.body?.messages)).toContain("look at my cat");
  expect(attacker.requests).toHaveLength(0);
  expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  expect(gateway.output()).not.toContain(fake.token);
}, 90_000);
