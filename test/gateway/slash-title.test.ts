/**
 * `/title` with a title already in use (issue 26, point 6): the reply never names a session
 * of another chat (another person's session id is not theirs to see), as the HTTP API leaves
 * the holder out; a session of the same chat is named, so it can be resumed.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { EchoAgent } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { forEachBackend } from "./backends.js";

forEachBackend((backend) => {
  async function setup() {
    const { db } = await backend.fresh();
    const local = new LocalAdapter();
    const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => new EchoAgent(), adapters: [local], titler: null });
    await runner.start();
    return { db, local, runner };
  }

  const alice = { chatId: "chat-alice", userId: "alice", userName: "Alice" };
  const bob = { chatId: "chat-bob", userId: "bob", userName: "Bob" };

  it("6. /title with another chat's title refuses without that session's id", async () => {
    const { local, runner } = await setup();
    await local.receive("hello", alice);
    const aliceSession = (await local.nextMessage((d) => d.message.kind === "reply")).message.sessionId!;
    await local.receive("/title daily test", alice);
    expect((await local.nextMessage()).message.text).toBe("Title set: daily test");

    await local.receive("hi", bob);
    await local.nextMessage((d) => d.message.kind === "reply");
    await local.receive("/title daily test", bob);
    const refused = (await local.nextMessage()).message;
    expect(refused).toMatchObject({ kind: "error", refused: true });
    expect(refused.text).not.toContain(aliceSession);
    expect(refused.text).toContain('"daily test"');
    expect(refused.text).toMatch(/already in use/u);
    await runner.drain(5_000);
    await runner.stop();
  });

  it("6. /title with the title of an earlier session of the same chat names it, so it can be resumed", async () => {
    const { local, runner } = await setup();
    await local.receive("hello", alice);
    const earlier = (await local.nextMessage((d) => d.message.kind === "reply")).message.sessionId!;
    await local.receive("/title daily test", alice);
    await local.nextMessage();
    await local.receive("/new", alice);
    await local.nextMessage();
    await local.receive("/title daily test", alice);
    const refused = (await local.nextMessage()).message;
    expect(refused).toMatchObject({ kind: "error", refused: true });
    expect(refused.text).toContain(earlier);
    expect(refused.text).toContain("/resume");
    await runner.drain(5_000);
    await runner.stop();
  });
});
