/**
 * `threadline serve` (a real child process) serves `GET /gateway/status` and
 * `GET /gateway/live` from its runner: a chat through the api-server adapter shows up in
 * the figures, and SIGTERM ends an open live stream with `event: end`.
 */
import { afterEach, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postChat, spawnGateway } from "./gateway-process.js";
import { waitFor } from "../support/wait-for.js";

const KEY = "admin-key-0123456789abcdef";

afterEach(async () => {
  await cleanupProcesses();
});

it("serve: /gateway/status and /gateway/live reflect the runner; SIGTERM ends the stream cleanly", async () => {
  const home = await makeHome({ api: { enabled: true, keys: [{ key: KEY }, { key: "tenant-key-0123456789ab", userId: "alice" }] } });
  const gateway = await spawnGateway({ home });
  const status = async (): Promise<any> => (await fetch(`${gateway.url}/gateway/status`, { headers: { "x-api-key": KEY } })).json();
  expect(await status()).toMatchObject({ accepting: true, activeTurns: 0, turnsCompleted: 0, adapters: [{ platform: "api-server", connected: true }] });
  const tenant = await fetch(`${gateway.url}/gateway/live`, { headers: { "x-api-key": "tenant-key-0123456789ab" } });
  expect(tenant.status).toBe(403);
  await tenant.text();

  const live = await fetch(`${gateway.url}/gateway/live`, { headers: { "x-api-key": KEY } });
  expect(live.status).toBe(200);
  let text = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of live.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
  })();

  expect((await postChat(gateway.url, "hello there", { sessionKey: "live-1" })).status).toBe(200);
  await waitFor(() => text.includes('"turnsCompleted":1'), { what: "a live snapshot with the completed turn", timeoutMs: 15_000, describe: () => text });
  expect((await status()).liveAgents).toBe(1);

  expect((await gateway.stop()).code).toBe(0);
  await reading.catch(() => {});
  expect(text).toContain("event: end");
});
