/**
 * Threat (issue 27, point 3): a Matrix room listed in `m.direct` stayed a DM when others
 * joined it, so a newcomer's message landed in the creator's DM session — with the creator's
 * whole history in the model's context and the creator's DM search scope. A room with more
 * than two members is a group, whatever `m.direct` says.
 *
 * Through a real `threadline serve` child with the Matrix adapter (the real matrix-js-sdk)
 * against the local fake homeserver, and the fake OpenAI-compatible provider.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MATRIX_IDS, startFakeMatrixHomeserver, type FakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "../serve/gateway-process.js";
import { dialogue, requestFor } from "../serve/model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-matrix-grows";
const { bot: BOT, alice: ALICE, bob: BOB, dm: DM } = MATRIX_IDS;
const k = (id: string): string => id.replaceAll(":", "%3A");

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ matrix: FakeMatrixHomeserver; model: FakeOpenAiServer }> {
  const matrix = await startFakeMatrixHomeserver({ maxPollMs: 2_000 });
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => matrix.close(),
    () => model.close(),
  );
  return { matrix, model };
}

async function started(gateway: GatewayProcess): Promise<void> {
  await waitFor(() => gateway.logLines().find((l) => l["platform"] === "matrix" && l["bot"] === BOT && l["mode"] === "sync"), {
    what: "the matrix startup line",
    describe: () => gateway.output(),
  });
}

describe("security: a Matrix DM room that grows past two members is a group", () => {
  it(
    "a newcomer in alice's m.direct room gets a session of their own, never alice's DM session or its history",
    async () => {
      const { matrix, model } = await fakes();
      // Both people may talk to the bot (stated, so a stricter default access changes nothing here).
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { enabled: false }, matrix: { homeserverUrl: matrix.url, allowedUsers: [ALICE, BOB] } },
      });
      const gateway = await spawnGateway({
        home,
        env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", MATRIX_ACCESS_TOKEN: matrix.token },
      });
      await started(gateway);
      // The DM (listed in the bot's m.direct for alice) while it has two members.
      matrix.pushMessage(DM, ALICE, "my locker code is 4242-heron");
      await matrix.waitFor(() => matrix.sentTo(DM)[0], "the reply to alice");
      // Bob joins the room; it now has three members.
      matrix.pushEvent(DM, { type: "m.room.member", sender: BOB, state_key: BOB, content: { membership: "join", displayname: "Bob" } });
      matrix.pushMessage(DM, BOB, { body: "Threadline: what was said here before?", "m.mentions": { user_ids: [BOT] } });
      await matrix.waitFor(() => matrix.sentTo(DM)[1], "the reply to bob");
      // The model, answering bob, never saw alice's DM.
      const asked = dialogue(await requestFor(model, "what was said here before?")).map(([, text]) => text);
      expect(asked.join("\n")).not.toMatch(/4242-heron/u);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        const keys = routes.map((r) => r.key).sort();
        expect(keys).toEqual([`agent:main:matrix:dm:${k(DM)}`, `agent:main:matrix:group:${k(DM)}:${k(BOB)}`].sort());
        const alices = routes.find((r) => r.key === `agent:main:matrix:dm:${k(DM)}`)!;
        const bobs = routes.find((r) => r.key === `agent:main:matrix:group:${k(DM)}:${k(BOB)}`)!;
        expect(bobs.sessionId).not.toBe(alices.sessionId);
        // Alice's DM session holds only alice's exchange; bob's session is a group session of bob's.
        const alicesTexts = (await db.getMessages(alices.sessionId)).map((m) => String(m.content));
        expect(alicesTexts.join("\n")).not.toMatch(/said here before/u);
        const bobsSession = await db.getSession(bobs.sessionId);
        expect([bobsSession?.userId, bobsSession?.chatType]).toEqual([BOB, "group"]);
      });
    },
    TEST_TIMEOUT,
  );
});
