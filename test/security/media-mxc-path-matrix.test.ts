/**
 * Threat (issue 30): a Matrix event steers the media download. A media event's `url` is
 * written by whoever sent it. The adapter turns `mxc://<server>/<media-id>` into a request to
 * the bot's own homeserver with the access token, so a crafted URI (`mxc://example.org/../../
 * _matrix/client/v3/…`, a query, a userinfo part) could make that authenticated request hit
 * another endpoint of the homeserver, and an `http(s)` URL in an event could make the gateway
 * fetch whatever the sender chose (or hand it the token).
 *
 * The REAL adapter against the fake homeserver and a "trap" server on another origin: every
 * malformed `mxc://` URI is refused before any request, an `http(s)` URL is dropped at mapping
 * and refused by `fetchMedia`, and a server name naming the trap is still asked of the bot's
 * homeserver only — the trap sees no request at all.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { MatrixAdapter, mapMatrixEvent, parseMxcUri, type MatrixRawEvent } from "../../src/adapters/matrix/index.js";
import { MediaUnavailableError } from "../../src/gateway/index.js";
import { TEST_RULES, useCleanups } from "../adapters/adapter-harness.js";
import { MATRIX_IDS, startFakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";

const cleanups = useCleanups();

async function startTrap(): Promise<{ host: string; url: string; hits: IncomingMessage["url"][] }> {
  const hits: IncomingMessage["url"][] = [];
  const server = createServer((req, res) => {
    hits.push(req.url);
    res.writeHead(200, { "content-type": "image/png" }).end("not for you");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const host = `localhost:${(server.address() as AddressInfo).port}`;
  return { host, url: `http://${host}`, hits };
}

async function setup() {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  const adapter = await MatrixAdapter.create({ homeserverUrl: fake.url, accessToken: fake.token, rules: TEST_RULES });
  return { fake, adapter, trap: await startTrap() };
}

const request = () => ({
  source: { platform: "matrix", chatType: "dm" as const, chatId: MATRIX_IDS.dm },
  maxBytes: 1_000_000,
  signal: AbortSignal.timeout(20_000),
});

it("an mxc URI that could change the request path is refused before any request", async () => {
  const { fake, adapter } = await setup();
  const crafted = [
    "mxc://example.org/../../_matrix/client/v3/account/whoami",
    "mxc://example.org/..",
    "mxc://example.org/%2e%2e",
    "mxc://example.org/abc/../../../account/whoami",
    "mxc://example.org/abc?access_token=x",
    "mxc://example.org/abc#x",
    "mxc://someone@example.org/abc",
    "mxc://example.org:8448:1/abc",
    "mxc://../abc",
    "mxc://exa mple.org/abc",
    "mxc://example.org/abc\n",
    "mxc://example.org/",
    "MXC://example.org/abc",
  ];
  const before = fake.calls.length;
  for (const url of crafted) {
    expect(parseMxcUri(url), url).toBeNull();
    await expect(adapter.fetchMedia({ kind: "image", url }, request()), url).rejects.toThrow(MediaUnavailableError);
  }
  expect(fake.calls.length).toBe(before);
  expect(fake.mediaDownloads).toEqual([]);
  // Valid ones (a port, an IP literal) parse.
  expect(parseMxcUri("mxc://matrix.example.org:8448/Abc_-09")).toEqual({ serverName: "matrix.example.org:8448", mediaId: "Abc_-09" });
  expect(parseMxcUri("mxc://[::1]:8448/abc")).toEqual({ serverName: "[::1]:8448", mediaId: "abc" });
});

it("an http(s) URL in an event is dropped at mapping and never fetched; a server name naming another host is still asked of the bot's homeserver", async () => {
  const { fake, adapter, trap } = await setup();
  const event: MatrixRawEvent = {
    event_id: "$evil:example.org",
    type: "m.room.message",
    sender: MATRIX_IDS.alice,
    room_id: MATRIX_IDS.dm,
    content: { msgtype: "m.image", body: "look.png", url: `${trap.url}/look.png`, info: { mimetype: "image/png" } },
  };
  const room = { roomId: MATRIX_IDS.dm, name: null, topic: null, direct: true, members: new Map() };
  const mapped = mapMatrixEvent(event, room, { userId: MATRIX_IDS.bot, displayName: null }, { repliesToBot: false, inBotThread: false })!;
  expect(mapped.inbound.media![0]!.url).toBeNull();
  await expect(adapter.fetchMedia({ kind: "image", url: `${trap.url}/look.png` }, request())).rejects.toThrow(MediaUnavailableError);
  await expect(adapter.fetchMedia({ kind: "image", url: "https://example.org/_matrix/media/v3/download/example.org/abc" }, request())).rejects.toThrow(
    MediaUnavailableError,
  );
  // `mxc://<the trap>/abc` is remote media: the bot's homeserver is asked for it (it would fetch it over federation), never the trap.
  await expect(adapter.fetchMedia({ kind: "image", url: `mxc://${trap.host}/abc` }, request())).rejects.toThrow(MediaUnavailableError);
  expect(fake.mediaDownloads).toEqual([{ api: "v1", serverName: trap.host, mediaId: "abc", authorized: true, status: 404 }]);
  expect(trap.hits).toEqual([]);
});
