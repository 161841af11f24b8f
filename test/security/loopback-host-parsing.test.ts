/**
 * Threat: a loopback check built on a prefix match (issue 27, point 4). `isLoopbackHost`
 * took any name starting with `127.` for a loopback address, so a Host check built on it
 * would let a rebinding domain such as `127.0.0.1.evil.example` through. Loopback means a
 * literal loopback address or `localhost`. And the rule "keyless mode refuses non-loopback
 * clients" must hold on a real socket, not only on a hand-built request object.
 */
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { isLoopbackAddress } from "../../src/adapters/internal.js";
import { isLoopbackHost } from "../../src/http-api/internal.js";
import { cleanupProcesses, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { rawRequest } from "./raw-http.js";

afterEach(async () => {
  await cleanupProcesses();
});

describe("loopback means a literal loopback address or localhost", () => {
  it("names that start like an address are not loopback", () => {
    for (const name of [
      "127.evil.example",
      "127.0.0.1.evil.example",
      "127.0.0.1.nip.io",
      "localhost.evil.example",
      "127.0.0.1:80",
      "::1.evil",
      "[::1].evil.example",
      "evil.example",
    ]) {
      expect(isLoopbackHost(name), name).toBe(false);
      expect(isLoopbackAddress(name), name).toBe(false);
    }
    expect(isLoopbackAddress("::ffff:10.0.0.1")).toBe(false);
    expect(isLoopbackAddress("10.127.0.1")).toBe(false);
    expect(isLoopbackAddress(undefined)).toBe(false);
  });

  it("literal loopback addresses and localhost are", () => {
    for (const name of ["127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "LOCALHOST"]) {
      expect(isLoopbackHost(name), name).toBe(true);
    }
    for (const address of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "0:0:0:0:0:ffff:127.0.0.2"])
      expect(isLoopbackAddress(address), address).toBe(true);
    expect(isLoopbackAddress("::ffff:7e00:1")).toBe(false);
  });

  it("keyless mode refuses a client on another address, on a real socket", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address;
    const home = await makeHome({ titles: { enabled: false } });
    // Listening on every address: reachable from this machine's non-loopback address too.
    const gateway = await spawnGateway({ home, args: ["--host", "0.0.0.0"] });
    const body = JSON.stringify({ messages: [{ role: "user", content: "hello" }] });
    const headers = { "content-type": "application/json", "x-threadline-session-key": "keyless" };
    if (external !== undefined) {
      const fromOutside = await rawRequest(`http://${external}:${gateway.port}/v1/chat/completions`, { method: "POST", headers, body, localAddress: external });
      expect(fromOutside.status).toBe(401);
      expect(fromOutside.text).toContain("adapters.apiServer.tokens");
    }
    // A gateway on a non-loopback address never serves keyless requests, not even to loopback clients.
    const fromLoopback = await rawRequest(`${gateway.url}/v1/chat/completions`, { method: "POST", headers, body });
    expect(fromLoopback.status).toBe(401);
    expect(fromLoopback.text).toContain("adapters.apiServer.tokens");
  }, 60_000);
});
