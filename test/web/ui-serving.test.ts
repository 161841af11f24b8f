/**
 * How the web page is served (no browser): the relative `<base href>` and API link that
 * make it work under any path prefix, `ui.enabled`, the API mounted for the page when
 * `api.enabled` is false, `threadline api` serving it too, and config validation.
 * Child processes run the BUILT bin (`npm run build` first).
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { parseServeConfig } from "../../src/serve/index.js";
import { buildServer, uiRoutes } from "../../src/http-api/index.js";
import { baseHref, relativeFolder } from "../../src/http-api/ui/ui-routes.js";
import { openSessionDB } from "../../src/store/index.js";
import { BIN, cleanupProcesses, databaseOf, freePort, GatewayProcess, makeHome, spawnGateway, waitFor } from "../serve/gateway-process.js";

const extra = new Set<GatewayProcess>();
afterEach(async () => {
  await Promise.all([...extra].map((c) => c.kill().catch(() => {})));
  extra.clear();
  await cleanupProcesses();
});

const meta = (html: string): { base: string | undefined; api: string | undefined } => ({
  base: /<base href="([^"]*)">/u.exec(html)?.[1],
  api: /<meta name="threadline-api" content="([^"]*)">/u.exec(html)?.[1],
});

describe("relative URLs", () => {
  it("computes the base of a page request from its depth under the mount", () => {
    expect(baseHref("/ui", "/ui")).toBe("ui/");
    expect(baseHref("/ui", "/ui/")).toBe("./");
    expect(baseHref("/ui", "/ui/sessions")).toBe("./");
    expect(baseHref("/ui", "/ui/sessions/abc")).toBe("../");
    expect(baseHref("/ui", "/ui/sessions/abc/")).toBe("../../");
  });
  it("links the page to its API relative to the mount", () => {
    expect(relativeFolder("/ui", "")).toBe("../");
    expect(relativeFolder("/ui", "/api")).toBe("../api/");
    expect(relativeFolder("/ui", "/ui/api")).toBe("api/");
    expect(relativeFolder("/ui", "/ui")).toBe("./");
  });
  it("fills them into the page served next to an API with a prefix", async () => {
    const db = await openSessionDB(":memory:");
    const app = await buildServer({ db, allowUnauthenticatedLoopback: true, prefix: "/api" });
    await app.register(uiRoutes, { prefix: "/ui", apiPrefix: "/api" });
    try {
      for (const [url, base] of [
        ["/ui", "ui/"],
        ["/ui/", "./"],
        ["/ui/sessions/x?source=cli", "../"],
      ] as const) {
        const res = await app.inject({ method: "GET", url });
        expect(res.statusCode).toBe(200);
        expect(meta(res.body)).toEqual({ base, api: "../api/" });
      }
      expect((await app.inject({ method: "GET", url: "/ui/assets/nope.js" })).statusCode).toBe(404);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe("config", () => {
  it("validates ui.enabled and keeps api.prefix off the page's path", () => {
    expect(parseServeConfig({}).ui).toEqual({ enabled: true });
    expect(parseServeConfig({ ui: { enabled: false } }).ui).toEqual({ enabled: false });
    expect(() => parseServeConfig({ ui: { enabled: "yes" } })).toThrow(/ui\.enabled: must be true or false/u);
    expect(() => parseServeConfig({ api: { prefix: "/ui" } })).toThrow(/api\.prefix: \/ui is where the web page is served/u);
    expect(parseServeConfig({ api: { prefix: "/ui" }, ui: { enabled: false } }).api.prefix).toBe("/ui");
  });
});

describe("threadline serve", () => {
  it("serves /ui with its own API at /ui/api by default, and nothing with ui.enabled: false", async () => {
    const on = await spawnGateway({ home: await makeHome({ gateway: { logLevel: "info" } }) });
    expect((await fetch(`${on.url}/ui`)).status).toBe(200);
    expect((await fetch(`${on.url}/ui/api/sessions`)).status).toBe(200);
    const off = await spawnGateway({ home: await makeHome({ ui: { enabled: false } }) });
    expect((await fetch(`${off.url}/ui`)).status).toBe(404);
    expect((await fetch(`${off.url}/ui/api/sessions`)).status).toBe(404);
  });

  it("uses the configured API when api.enabled (no second API at /ui/api)", async () => {
    const gateway = await spawnGateway({ home: await makeHome({ api: { enabled: true, prefix: "/api", keys: [{ key: "admin-key-0123456789abcdef" }] } }) });
    const res = await fetch(`${gateway.url}/ui/`);
    expect(meta(await res.text())).toEqual({ base: "./", api: "../api/" });
    // /ui/api/… is just a page path here (the page, not a second API).
    expect((await fetch(`${gateway.url}/ui/api/sessions`)).headers.get("content-type")).toMatch(/^text\/html/u);
    expect((await fetch(`${gateway.url}/api/sessions`)).status).toBe(401);
  });

  it("does not serve the page without keys on a non-loopback host, and says why", async () => {
    const gateway = await spawnGateway({ home: await makeHome({ gateway: { host: "0.0.0.0", logLevel: "info" } }) });
    expect((await fetch(`${gateway.url}/ui/`)).status).toBe(404);
    expect(gateway.logLines().some((l) => typeof l["msg"] === "string" && l["msg"].startsWith("web page not served: gateway.host 0.0.0.0"))).toBe(true);
  });
});

describe("threadline api", () => {
  it("serves the page at /ui over its API and prints the URL", async () => {
    const home = await makeHome({ api: { allowUnauthenticatedLoopback: true, prefix: "/api" } });
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
    for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG"]) delete env[name];
    const child = new GatewayProcess(
      spawn(process.execPath, [BIN, "api", "--db", databaseOf(home), "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] }),
      home,
      port,
    );
    extra.add(child);
    await waitFor(() => child.logLines().some((l) => l["msg"] === `web page: ${child.url}/ui/`), { what: "the web page line", describe: () => child.output() });
    const res = await fetch(`${child.url}/ui/sessions/abc`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(meta(await res.text())).toEqual({ base: "../", api: "../api/" });
  });
});
