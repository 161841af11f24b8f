// `threadline chat` shows the owner's memory (the person at the terminal) to the model and gives
// it the memory tool: what the agent saves at the terminal is the owner's, the memory that
// `threadline memory show` prints by default (issue 28). In process with piped stdin against
// the fake OpenAI-compatible server.
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../../support/fake-openai-server.js";
import { startInProcess } from "../cli-run.js";
import { tempHome, type TempHome } from "./terminal.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const OWNER = { platform: "owner", userId: "owner" };

describe("threadline chat and the owner's memory", () => {
  it("the prompt holds the owner's memory, and the memory tool saves to it", async () => {
    const fake: FakeOpenAiServer = await startFakeOpenAiServer();
    cleanups.push(() => fake.close());
    const home: TempHome = tempHome();
    cleanups.push(() => home.remove());
    home.writeConfig("titles: { enabled: false }\n");
    const seed = await openSessionDB(home.dbPath);
    await seed.writeMemory({ owner: OWNER, kind: "user", entries: ["The owner's dog is Rex"], expectedVersion: null });
    await seed.writeMemory({ owner: { platform: "telegram", userId: "42" }, kind: "user", entries: ["A stranger's secret"], expectedVersion: null });
    await seed.close();
    fake.enqueue(
      fakeToolCallReply([{ name: "memory", arguments: { action: "add", target: "memory", content: "Owner likes terse answers" } }]),
      fakeTextReply("Noted."),
    );

    const chat = startInProcess(["chat"], { ...home.env, OPENAI_BASE_URL: fake.url, THREADLINE_MODEL: "fake-model", OPENAI_API_KEY: "sk-x" });
    cleanups.push(async () => {
      chat.stdin.end();
      await chat.done.catch(() => {});
    });
    chat.stdin.write("keep answers short\n");
    await chat.waitFor("the reply", () => chat.stdout().includes("Noted."));
    chat.stdin.end();
    expect((await chat.done).code).toBe(0);

    const first = fake.chatRequests()[0]!;
    const system = (first.body?.messages ?? [])
      .filter((m) => m.role === "system")
      .map((m) => String(m.content))
      .join("\n");
    expect(system).toContain("The owner's dog is Rex");
    expect(system).not.toContain("A stranger's secret");
    const db = await openSessionDB(home.dbPath);
    try {
      expect((await db.getMemory(OWNER, "memory"))?.entries).toEqual(["Owner likes terse answers"]);
    } finally {
      await db.close();
    }
  }, 60_000);
});
