// `threadline chat` prints a streamed reply as the provider produces it (issue 12, point 14):
// the built bin runs as a child with piped stdin against the fake OpenAI-compatible server,
// which holds the last word back until the test releases it.
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../../support/fake-openai-server.js";
import { BIN, tempHome, type TempHome } from "./terminal.js";

const children: ChildProcess[] = [];
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function waitUntil(what: string, probe: () => boolean, describeState: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}; so far:\n${describeState()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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

    const child = spawn(process.execPath, [BIN, "chat"], {
      env: { ...home.env, OPENAI_BASE_URL: fake.url, THREADLINE_MODEL: "fake-model", OPENAI_API_KEY: "sk-x" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

    child.stdin!.write("count to four\n");
    const state = (): string => `stdout:\n${stdout}\nstderr:\n${stderr}`;
    // The provider holds "four" back; the first three words are already on the screen.
    await waitUntil("the first three words", () => stdout.includes("one two three "), state);
    expect(stdout).not.toContain("four");
    release();
    await waitUntil("the whole reply", () => stdout.includes("one two three four\n\n"), state);
    // The streamed reply is printed once, not again when the turn ends.
    expect(stdout.split("one two three").length - 1).toBe(1);

    child.stdin!.end();
    expect(await exited).toBe(0);
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
