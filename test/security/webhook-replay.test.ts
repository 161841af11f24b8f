/**
 * Threat: replaying a captured generic-webhook request (issue 27, smaller points). The
 * signature covered the body only, so a request captured once (a proxy log, a leaked
 * capture) could be sent again at any time. The signature now covers a timestamp
 * (`X-Threadline-Timestamp`, signed as `"<timestamp>.<raw body>"`), and a request more
 * than 5 minutes old — or more than 5 minutes in the future — is refused with nothing stored.
 */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postWebhook, signBody, spawnGateway, startCallbackServer, withDatabase } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 60_000;
const SECRET = "replay-webhook-secret-0123456789";

afterEach(async () => {
  await cleanupProcesses();
});

describe("the generic webhook refuses replays", () => {
  it(
    "a captured request signed over the body only, or with a timestamp older than 5 minutes (or in the future), is refused; a fresh one is accepted",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ titles: { enabled: false }, adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } } });
      const gateway = await spawnGateway({ home });
      const now = Math.floor(Date.now() / 1000);
      const message = (id: string) => ({ chatId: "replay-chat", userId: "u1", text: `transfer ${id}`, messageId: id });

      // The old scheme: an HMAC of the body alone, no timestamp (what a captured request of before looks like).
      const bodyOnly = message("old-scheme");
      const oldScheme = await postWebhook(gateway.url, SECRET, bodyOnly, { signature: signBody(SECRET, JSON.stringify(bodyOnly)), headers: {} });
      expect(oldScheme.status).toBe(401);
      // Correctly signed, but captured 10 minutes ago / dated 10 minutes ahead.
      const stale = await postWebhook(gateway.url, SECRET, message("stale"), { timestamp: now - 600 });
      expect(stale.status).toBe(401);
      expect(JSON.stringify(stale.body)).toMatch(/old/);
      const future = await postWebhook(gateway.url, SECRET, message("future"), { timestamp: now + 600 });
      expect(future.status).toBe(401);
      // A fresh timestamp with a signature over another timestamp is refused too.
      const raw = JSON.stringify(message("swapped"));
      const swapped = await postWebhook(gateway.url, SECRET, message("swapped"), {
        timestamp: now,
        signature: `sha256=${createHmac("sha256", SECRET)
          .update(`${now - 600}.${raw}`)
          .digest("hex")}`,
      });
      expect(swapped.status).toBe(401);

      // Within the window (4 minutes old) it is accepted, and the reply is signed the same way.
      const fresh = await postWebhook(gateway.url, SECRET, message("fresh"), { timestamp: now - 240 });
      expect(fresh.status).toBe(202);
      const reply = await callback.replyTo("fresh");
      expect(reply.signatureValid).toBe(true);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.searchMessages("transfer")).map((hit) => hit.snippet).join(" ")).not.toMatch(/stale|future|swapped|old-scheme/);
        expect((await db.listSessions()).items).toHaveLength(1);
      });
    },
    TEST_TIMEOUT,
  );
});
