/**
 * The chat platform SDKs are loaded only when their adapter is configured: the CLI and an
 * HTTP-only gateway never resolve grammY, discord.js, the Slack SDK or matrix-js-sdk; a
 * gateway with only Telegram configured resolves grammY and nothing else, one with only
 * Matrix resolves matrix-js-sdk (and never its end-to-end encryption module). Observed in real child
 * processes through a module-resolution hook (test/support/sdk-load-hook.mjs).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../src/store/index.js";
import { startFakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { SIGNAL_IDS, startFakeSignalServer, type FakeSignalServer } from "../fakes/signal/fake-signal-server.js";
import { startFakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { BIN, cleanupProcesses, databaseOf, makeHome, spawnGateway, waitFor } from "./gateway-process.js";

const HOOK = pathToFileURL(fileURLToPath(new URL("../support/sdk-load-hook.mjs", import.meta.url))).href;
const TIMEOUT = 60_000;

const fakes: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** The environment that makes a child log the SDKs it resolves into `log`. */
function hooked(log: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${HOOK}`, THREADLINE_TEST_SDK_LOG: log };
}

/** The SDK specifiers a child resolved (empty when it resolved none). */
function resolved(log: string): string[] {
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
}

describe("chat platform SDKs load lazily", () => {
  it(
    "the CLI resolves no platform SDK",
    async () => {
      const home = await makeHome({});
      const db = await openSessionDB(databaseOf(home));
      await db.close();
      const log = join(home, "sdk.log");
      const env = { ...process.env, THREADLINE_HOME: home, ...hooked(log) };
      for (const args of [["sessions", "list"], ["--help"], ["config", "check"]]) {
        const code = await new Promise<number>((resolve) =>
          execFile(process.execPath, [BIN, ...args], { env }, (error) => resolve(error ? Number(error.code ?? 1) : 0)),
        );
        expect(code, args.join(" ")).toBe(0);
      }
      // The hook is live: a child that imports grammY is seen (so an empty log means "not loaded").
      await new Promise<void>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--input-type=module", "-e", "await import('grammy')"],
          { env, cwd: fileURLToPath(new URL("../..", import.meta.url)) },
          (error) => (error ? reject(error) : resolve()),
        ),
      );
      expect(resolved(log)).toEqual(["grammy"]);
    },
    TIMEOUT,
  );

  it(
    "an HTTP-only gateway resolves none; with Telegram configured it resolves grammY only",
    async () => {
      const plainHome = await makeHome({});
      const plainLog = join(plainHome, "sdk.log");
      const plain = await spawnGateway({ home: plainHome, env: hooked(plainLog) });
      expect(await plain.stop()).toEqual({ code: 0, signal: null });
      expect(resolved(plainLog)).toEqual([]);

      const telegram = await startFakeTelegramServer();
      fakes.push(telegram);
      const home = await makeHome({ adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url } } });
      const log = join(home, "sdk.log");
      const gateway = await spawnGateway({ home, env: { ...hooked(log), TELEGRAM_BOT_TOKEN: telegram.token } });
      await waitFor(() => /telegram adapter connected/u.test(gateway.output()), { what: "the telegram adapter to connect", describe: () => gateway.output() });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      const seen = resolved(log);
      expect(seen).toContain("grammy");
      expect(seen.filter((s) => !/^(grammy|@grammyjs\/)/u.test(s))).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "with only Signal configured the gateway resolves ws (its receive WebSocket) and no platform SDK",
    async () => {
      const signal: FakeSignalServer = await startFakeSignalServer();
      fakes.push(signal);
      const home = await makeHome({ adapters: { apiServer: { enabled: false }, signal: { apiUrl: signal.url, number: SIGNAL_IDS.bot } } });
      const log = join(home, "sdk.log");
      const gateway = await spawnGateway({ home, env: hooked(log) });
      await waitFor(() => /signal adapter connected as \+4915100000000 \(websocket\)/u.test(gateway.output()), {
        what: "the signal adapter to connect",
        describe: () => gateway.output(),
      });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect([...new Set(resolved(log))]).toEqual(["ws"]);
    },
    TIMEOUT,
  );

  it(
    "with only Matrix configured the gateway resolves matrix-js-sdk, not its crypto module and no other platform's SDK",
    async () => {
      const matrix = await startFakeMatrixHomeserver();
      fakes.push(matrix);
      const home = await makeHome({ adapters: { apiServer: { enabled: false }, matrix: { homeserverUrl: matrix.url } } });
      const log = join(home, "sdk.log");
      const gateway = await spawnGateway({ home, env: { ...hooked(log), MATRIX_ACCESS_TOKEN: matrix.token } });
      await waitFor(() => /matrix adapter connected as @threadline:example\.org \(sync\)/u.test(gateway.output()), {
        what: "the matrix adapter to connect",
        describe: () => gateway.output(),
      });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      const seen = resolved(log);
      expect(seen).toContain("matrix-js-sdk");
      expect(seen.filter((s) => !/^(matrix-js-sdk|matrix-widget-api|matrix-events-sdk|@matrix-org\/)/u.test(s))).toEqual([]);
      expect(seen.filter((s) => s.includes("crypto-wasm") || s.includes("@matrix-org/olm"))).toEqual([]);
    },
    TIMEOUT,
  );
});
