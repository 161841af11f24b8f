/**
 * End to end: the real `@openai/agents` `run()` with a ThreadlineSession on a SQLite file,
 * against the local fake OpenAI-compatible server: two turns (the first with a tool call and
 * reasoning), then a third turn in a fresh child process on the same file, where the model
 * must be sent the whole earlier history. No connection may leave the machine.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "@openai/agents";
import { afterEach, describe, expect, it } from "vitest";
import { ThreadlineSession } from "../../../src/bridges/openai-agents/index.js";
import { openSessionDB } from "../../../src/index.js";
import { fakeTextReply, fakeToolCallReply, messageText, startFakeOpenAiServer, type FakeOpenAiServer } from "../../support/fake-openai-server.js";
import { isLoopback, outboundDestinations, weatherAgent } from "./fixtures/weather-agent.js";

const TURN_SCRIPT = fileURLToPath(new URL("./fixtures/agent-turn.ts", import.meta.url));

/** Runs one agent turn in a child process; resolves its JSON report. */
function turnInChildProcess(args: string[]): Promise<{ finalOutput: string; destinations: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", TURN_SCRIPT, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENAI_API_KEY: "" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`the turn process exited with ${code}: ${err}`));
      else resolve(JSON.parse(out) as { finalOutput: string; destinations: string[] });
    });
  });
}

describe("run() with a ThreadlineSession", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("keeps a multi-turn conversation with a tool call, and a fresh process resumes it with the whole history", async () => {
    const server: FakeOpenAiServer = await startFakeOpenAiServer();
    cleanups.push(() => server.close());
    const dir = mkdtempSync(join(tmpdir(), "tl-oai-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "state.db");
    const db = await openSessionDB(file);
    cleanups.push(() => db.close());
    const agent = weatherAgent(server.url);

    server.enqueue(
      fakeToolCallReply([{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } }], { reasoning: "The user wants Oslo." }),
      fakeTextReply("It is sunny in Oslo."),
      fakeTextReply("Tomorrow looks sunny too."),
    );
    const session = new ThreadlineSession(db, { title: "Oslo weather" });
    expect((await run(agent, "What is the weather in Oslo?", { session })).finalOutput).toBe("It is sunny in Oslo.");
    expect((await run(agent, "And tomorrow?", { session })).finalOutput).toBe("Tomorrow looks sunny too.");
    const id = await session.getSessionId();

    // The second turn's request carried the first turn: call, result, reasoning and answer.
    const second = server.chatRequests()[2]!.body!.messages!;
    expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(second[2]).toMatchObject({
      tool_calls: [{ id: "call_w1", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
      reasoning: "The user wants Oslo.",
    });
    expect(second[3]).toMatchObject({ tool_call_id: "call_w1", content: "sunny in Oslo" });

    // Seen by the rest of Threadline like any other session.
    expect(await db.getSession(id)).toMatchObject({ source: "openai-agents", title: "Oslo weather", messageCount: 7, toolCallCount: 1 });
    expect((await db.searchMessages("tomorrow")).map((h) => h.sessionId)).toEqual([id, id]);
    const before = await session.getItems();
    await db.close();

    // A fresh process, the same file: the third turn.
    server.enqueue(fakeTextReply("Goodbye!"));
    const child = await turnInChildProcess([file, server.url, id, "Thanks, bye"]);
    expect(child.finalOutput).toBe("Goodbye!");
    const third = server.chatRequests()[3]!.body!.messages!;
    expect(third.map((m) => [m.role, messageText(m.content)])).toEqual([
      ["system", "Answer weather questions briefly."],
      ["user", "What is the weather in Oslo?"],
      ["assistant", ""],
      ["tool", "sunny in Oslo"],
      ["assistant", "It is sunny in Oslo."],
      ["user", "And tomorrow?"],
      ["assistant", "Tomorrow looks sunny too."],
      ["user", "Thanks, bye"],
    ]);
    expect(third[2]).toMatchObject({ tool_calls: [{ id: "call_w1" }], reasoning: "The user wants Oslo." });

    // The earlier items come back unchanged, followed by the child's turn.
    const reopened = await openSessionDB(file);
    cleanups.push(() => reopened.close());
    const after = await new ThreadlineSession(reopened, { sessionId: id }).getItems();
    expect(after.slice(0, before.length)).toStrictEqual(before);
    expect(after.slice(before.length).map((i) => (i as { role?: string }).role)).toEqual(["user", "assistant"]);
    expect((await reopened.getSession(id))?.messageCount).toBe(9);

    // Every connection of both processes went to this machine (the fake server), none elsewhere.
    for (const destinations of [outboundDestinations(), child.destinations]) {
      expect(destinations.length).toBeGreaterThan(0);
      expect(destinations.filter((d) => !isLoopback(d))).toEqual([]);
    }
    expect(server.requests.every((r) => r.path === "/v1/chat/completions")).toBe(true);
    expect(server.chatRequests()).toHaveLength(4);
  });
});

describe("threadline/openai-agents without @openai/agents installed", () => {
  it("loads and works: the SDK is only a type dependency", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tl-oai-"));
    try {
      const script = fileURLToPath(new URL("./fixtures/without-sdk.ts", import.meta.url));
      const hook = fileURLToPath(new URL("./fixtures/block-agents-sdk.mjs", import.meta.url));
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", "--import", hook, script, join(dir, "state.db")], { stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
      });
      expect(out).toBe('ok [{"type":"message","role":"user","content":"hi"}]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
