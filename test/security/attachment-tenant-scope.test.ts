/**
 * Threat (issue 30): a tenant's API key reads another person's photos, voice notes or files.
 * Attachments are served only through a session the key may see, and only when a message of
 * that session refers to them: another tenant's session answers exactly like a missing one
 * (404, same body) on the list and on the bytes (GET and HEAD), and naming someone else's
 * attachment through one's own session is the same 404 as naming bytes that exist nowhere
 * (no oracle for what others sent). Over real loopback HTTP, on both backends.
 */
import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, BOB, call, closeServers, seed, startApi } from "../http-api/api-harness.js";
import { attach, PNG_BYTES, sha256Of } from "../http-api/attachment-fixtures.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("another tenant's attachment is a 404 exactly like a missing session's; one's own session cannot reach it either", async () => {
    const { db } = await backend.fresh();
    const { a1, b1, n1 } = await seed(db);
    const secret = Buffer.from(`bob's private scan ${randomBytes(8).toString("hex")}`);
    const [bobs] = await attach(db, b1, [{ bytes: secret, kind: "file", mimeType: "text/plain", fileName: "passport.txt" }], "my passport");
    const [nobodys] = await attach(db, n1, [{ bytes: PNG_BYTES, kind: "image", mimeType: "image/png" }]);
    const api = await startApi(db);

    for (const [session, sha256] of [
      [b1, bobs!.sha256],
      [n1, nobodys!.sha256],
    ] as const) {
      for (const [method, path, missingPath] of [
        ["GET", `/sessions/${session}/attachments/${sha256}`, `/sessions/no-such-id/attachments/${sha256}`],
        ["GET", `/sessions/${session}/attachments`, "/sessions/no-such-id/attachments"],
      ] as const) {
        const theirs = await call(api, method, path, { key: ALICE });
        const missing = await call(api, method, missingPath, { key: ALICE });
        expect(theirs.status, path).toBe(404);
        expect(theirs.body).toEqual(JSON.parse(JSON.stringify(missing.body).replaceAll("no-such-id", session)));
        expect(theirs.text).not.toContain("private scan");
        expect(theirs.headers.get("content-disposition")).toBeNull();
      }
      const head = await fetch(`${api.url}/sessions/${session}/attachments/${sha256}`, { method: "HEAD", headers: { "x-api-key": ALICE } });
      expect(head.status).toBe(404);
      expect(head.headers.get("content-disposition")).toBeNull();
      expect(head.headers.get("content-type")).toMatch(/^application\/json/u);
    }

    // Through alice's own session: bob's bytes are as unknown as bytes stored nowhere.
    const viaOwn = await call(api, "GET", `/sessions/${a1}/attachments/${bobs!.sha256}`, { key: ALICE });
    const nowhere = sha256Of(randomBytes(32));
    const unknown = await call(api, "GET", `/sessions/${a1}/attachments/${nowhere}`, { key: ALICE });
    expect(viaOwn.status).toBe(404);
    expect(viaOwn.body).toEqual(JSON.parse(JSON.stringify(unknown.body).replaceAll(nowhere, bobs!.sha256)));
    expect(viaOwn.text).not.toContain("private scan");

    // Bob's own key gets them; the list shows a scoped key only its own session's.
    const own = await call(api, "GET", `/sessions/${b1}/attachments/${bobs!.sha256}`, { key: BOB });
    expect(own.status).toBe(200);
    expect(own.text).toBe(secret.toString());
    expect((await call(api, "GET", `/sessions/${b1}/attachments`, { key: BOB })).body.items.map((a: { sha256: string }) => a.sha256)).toEqual([bobs!.sha256]);
  });
});
