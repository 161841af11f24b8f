/**
 * Threat 5 (docs/security.md): a forged message id suppresses someone else's message. Inbound
 * claims drop a message whose id was claimed already; the claim is the platform, the chat and the
 * id together, so a message sent in one chat (or on one platform) with the id another chat's
 * message will have does not make the gateway ignore that message. Real runner, real store.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { forEachBackend } from "../gateway/backends.js";

forEachBackend((backend) => {
  it("an id first sent by mallory (another chat, another platform) does not claim alice's message with that id", async () => {
    const { db } = await backend.fresh();
    const discord = new LocalAdapter({ platform: "discord" });
    const slack = new LocalAdapter({ platform: "slack" });
    const runner = new GatewayRunner({
      store: new SessionRouter({ db }),
      adapters: [discord, slack],
      agentFactory: () => ({ name: "echo", runTurn: async () => ({ messages: [{ role: "assistant" as const, content: "answered" }] }) }),
    });
    await runner.start();
    try {
      const id = { messageId: "1234567890" };
      // Mallory sends first, in her own DM and on another platform, with the id alice's next message will carry.
      expect((await discord.receive("forged", { chatId: "dm-mallory", userId: "mallory", chatType: "dm" }, id)).status).toBe("accepted");
      expect((await slack.receive("forged", { chatId: "dm-alice", userId: "mallory", chatType: "dm" }, id)).status).toBe("accepted");
      // Alice's own message with that id is taken and answered, not dropped as a duplicate.
      expect((await discord.receive("my real question", { chatId: "dm-alice", userId: "alice", chatType: "dm" }, id)).status).toBe("accepted");
      await discord.nextMessage((d) => d.source.chatId === "dm-alice" && d.message.kind === "reply");
      // The same id again in alice's chat is a duplicate: the claim works, only its scope is narrow.
      expect((await discord.receive("my real question", { chatId: "dm-alice", userId: "alice", chatType: "dm" }, id)).status).toBe("duplicate");
    } finally {
      await runner.stop();
    }
  });
});
