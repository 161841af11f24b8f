// The terminal's session machinery in-process, on a real SQLite file: the cli adapter, a
// SessionRouter making 6-hex ids, and the gateway's slash commands on those ids.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliAdapter } from "../../../src/adapters/index.js";
import { EchoAgent } from "../../../src/agents/index.js";
import { assertSafeSessionId, GatewayRunner, SESSION_ID_PATTERN, SessionRouter } from "../../../src/gateway/index.js";
import { InvalidInputError, openSessionDB, type SessionDB } from "../../../src/store/index.js";

const CLI_ID = /^\d{8}_\d{6}_[0-9a-f]{6}$/;

let dir: string;
let db: SessionDB;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "tl-cli-session-"));
  db = await openSessionDB(join(dir, "state.db"));
});

afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function terminal(): Promise<{ cli: CliAdapter; runner: GatewayRunner; store: SessionRouter; key: string; say(text: string): Promise<string> }> {
  const store = new SessionRouter({ db, sessionIdHexDigits: 6 });
  const cli = new CliAdapter({ chatId: "lane-1", userId: "ada" });
  const runner = new GatewayRunner({ store, agentFactory: () => new EchoAgent(), adapters: [cli] });
  await runner.start();
  const key = await store.sessionKeyFor(cli.source);
  const say = async (text: string): Promise<string> => {
    const before = cli.sent.length;
    // Something is delivered, then the turn (if one runs) ends.
    const delivered = new Promise<void>((resolve) => {
      const off = cli.onDelivery(() => {
        off();
        resolve();
      });
    });
    await cli.submit(text);
    await delivered;
    await runner.whenIdle(key);
    return cli.sent
      .slice(before)
      .map((d) => d.message.text)
      .join("\n");
  };
  return { cli, runner, store, key, say };
}

describe("terminal sessions", () => {
  it("the cli adapter's source is a direct chat on platform cli, keyed by its lane", async () => {
    const { cli, runner, key } = await terminal();
    expect(cli.source).toMatchObject({ platform: "cli", chatType: "dm", chatId: "lane-1", userId: "ada" });
    expect(key).toBe("agent:main:cli:dm:lane-1");
    await runner.stop();
  });

  it("SessionRouter makes 6-hex ids when asked (8 by default) and rejects other widths", () => {
    expect(new SessionRouter({ db }).sessionIdHexDigits).toBe(8);
    expect(() => new SessionRouter({ db, sessionIdHexDigits: 7 as 6 })).toThrow(InvalidInputError);
  });

  it("a conversation stores a cli session with a 6-hex id; /new, /compress and /resume keep working on such ids", async () => {
    const { runner, store, key, say } = await terminal();
    expect(await say("hello")).toBe("Echo: hello");
    const first = (await store.getEntry(key))!.sessionId;
    expect(first).toMatch(CLI_ID);
    const session = await db.getSession(first);
    expect(session).toMatchObject({ source: "cli", sessionKey: key, chatId: "lane-1", userId: "ada", messageCount: 2 });

    expect(await say("/new")).toMatch(/Started a new session/);
    const second = (await store.getEntry(key))!.sessionId;
    expect(second).toMatch(CLI_ID);
    expect(second).not.toBe(first);

    expect(await say(`/resume ${first}`)).toMatch(/Resumed/);
    expect((await store.getEntry(key))!.sessionId).toBe(first);

    expect(await say("/compress")).toMatch(/Compressed into a new session/);
    const child = (await store.getEntry(key))!.sessionId;
    expect(child).toMatch(CLI_ID);
    expect((await db.getSession(child))!.parentSessionId).toBe(first);
    await runner.stop();
  });

  it("session ids with 8 or 6 hex digits pass the gateway's id check; others do not", () => {
    expect(SESSION_ID_PATTERN.test("20260314_101500_a1b2c3")).toBe(true);
    expect(SESSION_ID_PATTERN.test("20260314_101500_a1b2c3d4")).toBe(true);
    expect(() => assertSafeSessionId("20260314_101500_a1b2c3")).not.toThrow();
    for (const bad of ["20260314_101500_a1b2c", "20260314_101500_a1b2c3d", "20260314_101500_A1B2C3"]) {
      expect(() => assertSafeSessionId(bad)).toThrow(InvalidInputError);
    }
  });
});
