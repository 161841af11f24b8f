// `threadline chat` prints a streamed reply as the provider produces it (issue 12, point 14):
// the chat runs in process with piped stdin against the fake OpenAI-compatible server, which
// holds the last word back until the test releases it.
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../../support/fake-openai-server.js";
import { startInProcess } from "../cli-run.js";
import { tempHome, type TempHome } from "./terminal.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("threadline chat with a streaming provider", () => {
  it("prints the reply's words as they arrive, before the provider has finished", async () => {
    const fake: FakeOpenAiServer = await startFakeOpenAiServer({ streamTokens: true });
    cleanups.push(() => fake.close());
    const home: TempHome = tempHome();
    cleanups.push(() => home.remove());
    home.writeConfig("titles: { enabled: false }\n");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(() => release());
    fake.enqueue({ ...fakeTextReply("one two three four"), holdLastToken: held });

    const chat = startInProcess(["chat"], { ...home.env, OPENAI_BASE_URL: fake.url, THREADLINE_MODEL: "fake-model", OPENAI_API_KEY: "sk-x" });
    // Whatever happens, the chat ends with the test (end of input).
    cleanups.push(async () => {
      chat.stdin.end();
      await chat.done.catch(() => {});
    });

    chat.stdin.write("count to four\n");
    // The provider holds "four" back; the first three words are already on the screen.
    await chat.waitFor("the first three words", () => chat.stdout().includes("one two three "));
    expect(chat.stdout()).not.toContain("four");
    release();
    await chat.waitFor("the whole reply", () => chat.stdout().includes("one two three four\n\n"));
    // The streamed reply is printed once, not again when the turn ends.
    expect(chat.stdout().split("one two three").length - 1).toBe(1);

    chat.stdin.end();
    const { code, stdout } = await chat.done;
    expect(code).toBe(0);
    const id = /Session (\d{8}_\d{6}_[0-9a-f]{6})/u.exec(stdout)![1]!;
    const db = await openSessionDB(home.dbPath);
    try {
      expect((await db.getMessages(id)).map((m) => m.content)).toEqual(["count to four", "one two three four"]);
      expect((await db.getSession(id))!.model).toBe("fake-model");
    } finally {
      await db.close();
    }
  }, 60_000);
});
