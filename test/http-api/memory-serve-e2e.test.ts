/**
 * Memory over HTTP on a real `threadline serve` child (the built bin: `npm run build` first),
 * with the fake provider: the agent saves a fact with its `memory` tool in a conversation of an
 * api-server token bound to alice; alice's API key then finds that memory under `/memory`, next
 * to her sessions (the owner's user id is her sessions' `userId`: memory is scoped like
 * sessions), while bob's key sees neither and the admin key sees it. Alice edits it over HTTP
 * and the agent's next request carries the edited text.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, postChat, spawnGateway } from "../serve/gateway-process.js";
import { contentText, requestFor } from "../serve/model-dialogue.js";
import { call } from "./api-harness.js";

const FAKE_KEY = "sk-fake-memory-http";
const ADMIN = "admin-key-0123456789abcdef";
const ALICE_KEY = "alice-key-0123456789abcdef";
const BOB_KEY = "bob-key-0123456789abcdefgh";
const ALICE_TOKEN = "alice-token-0123456789abcdef";

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

describe("threadline serve: memory over HTTP (issue 28)", () => {
  it("the memory the agent saved for alice is hers under /memory, beside her sessions; bob's key sees none; her edit reaches the next prompt", {
    timeout: 90_000,
  }, async () => {
    const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"], title: null });
    fakes.push(fake);
    fake.setScript((request) => {
      const messages = request.body?.messages ?? [];
      const last = messages.at(-1);
      if (last?.role === "tool") return fakeTextReply("Noted.");
      if (last?.role === "user" && JSON.stringify(last.content).includes("remember that I fly gliders")) {
        return fakeToolCallReply([{ name: "memory", arguments: { action: "add", target: "user", content: "Alice flies gliders." } }]);
      }
      return null;
    });
    const home = await makeHome({
      titles: { enabled: false },
      adapters: { apiServer: { tokens: [{ token: ALICE_TOKEN, userId: "alice" }] } },
      api: {
        enabled: true,
        keys: [
          { key: ADMIN, name: "ops" },
          { key: ALICE_KEY, userId: "alice" },
          { key: BOB_KEY, userId: "bob" },
        ],
      },
    });
    const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });

    const saved = await postChat(gateway.url, "please remember that I fly gliders", { sessionKey: "notes", token: ALICE_TOKEN });
    expect(saved.status).toBe(200);
    const sessionId = saved.headers.get("x-threadline-session-id");

    // Alice's key: her session and her memory, the memory's owner being her sessions' user.
    const sessions = await call(gateway.url, "GET", "/sessions", { key: ALICE_KEY });
    expect(sessions.body.items.map((s: { id: string }) => s.id)).toEqual([sessionId]);
    const session = await call(gateway.url, "GET", `/sessions/${sessionId}`, { key: ALICE_KEY });
    const mine = await call(gateway.url, "GET", "/memory", { key: ALICE_KEY });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.items).toHaveLength(1);
    const record = mine.body.items[0];
    expect(record).toMatchObject({
      owner: { platform: session.body.source, userId: session.body.userId },
      kind: "user",
      entries: ["Alice flies gliders."],
      version: 1,
    });
    expect(record.owner.userId).toBe("alice");

    // Bob's key: nothing of hers, by list or by path; the admin key sees it.
    expect((await call(gateway.url, "GET", "/memory", { key: BOB_KEY })).body.items).toEqual([]);
    const path = `/memory/${encodeURIComponent(record.owner.platform)}/alice`;
    expect((await call(gateway.url, "GET", path, { key: BOB_KEY })).status).toBe(404);
    expect((await call(gateway.url, "GET", path, { key: ADMIN })).body.user.entries).toEqual(["Alice flies gliders."]);

    // Alice corrects it over HTTP; the agent's next request holds the new text, not the old.
    const edited = await call(gateway.url, "PUT", `${path}/user`, { key: ALICE_KEY, body: { entries: ["Alice flies hang gliders."], expectedVersion: 1 } });
    expect(edited.status, edited.text).toBe(200);
    expect((await postChat(gateway.url, "what do I fly?", { sessionKey: "notes", token: ALICE_TOKEN })).status).toBe(200);
    // The memory is in the system prompt (the earlier tool call stays in the history, so only the system text is checked).
    const asked = ((await requestFor(fake, "what do I fly?")).body?.messages ?? [])
      .filter((m) => m.role === "system")
      .map((m) => contentText(m.content))
      .join("\n");
    expect(asked).toContain("Alice flies hang gliders.");
    expect(asked).not.toContain("Alice flies gliders.");
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });
});
