/**
 * Threat (issue 30): the attachment id in `GET /sessions/{id}/attachments/{sha256}` smuggles a
 * path or a query fragment into the store (`../../etc/passwd`, `' OR '1'='1`, a NUL byte, a
 * prefix that would match many blobs). Anything but 64 hex digits is refused with a 400 before
 * the store is asked, whatever the session, with the same answer for a visible, a foreign and
 * a missing session (no oracle). Over real loopback HTTP (raw requests: nothing normalises
 * the path on the way).
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ADMIN, ALICE, closeServers, seed, startApi } from "../http-api/api-harness.js";
import { attach, PNG_BYTES } from "../http-api/attachment-fixtures.js";
import { rawRequest } from "./raw-http.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("refuses every id that is not 64 hex digits with a 400 naming the rule", async () => {
    const { db } = await backend.fresh();
    const { a1, b1 } = await seed(db);
    const [photo] = await attach(db, a1, [{ bytes: PNG_BYTES, kind: "image", mimeType: "image/png" }]);
    const api = await startApi(db);
    const sha = photo!.sha256;
    const bad = [
      "not-hex",
      "g".repeat(64),
      sha.slice(0, 63),
      `${sha}0`,
      sha.slice(0, 8), // a prefix: never a LIKE match
      "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
      `${sha.slice(0, 60)}%2F..`,
      "%27%20OR%20%271%27%3D%271",
      `${sha.slice(0, 63)}%00`,
      `${sha.slice(0, 62)}%25_`,
      "*",
    ];
    for (const segment of bad) {
      for (const [session, key] of [
        [a1, ALICE],
        [b1, ALICE],
        ["no-such-id", ALICE],
        [a1, ADMIN],
      ] as const) {
        const reply = await rawRequest(`${api.url}/sessions/${session}/attachments/${segment}`, { headers: { "x-api-key": key } });
        expect(reply.status, `${session} ${segment}`).toBe(400);
        expect(reply.json, segment).toEqual({
          error: {
            code: "TL_ERR_BAD_REQUEST",
            message:
              "An attachment id is the 64 hex digits of its SHA-256, as the message's attachment part names it (attachment.sha256); this path segment is not one.",
            details: { field: "sha256", in: "path" },
          },
        });
      }
    }
    // The real id works, in either case.
    expect((await rawRequest(`${api.url}/sessions/${a1}/attachments/${sha}`, { headers: { "x-api-key": ALICE } })).status).toBe(200);
    expect((await rawRequest(`${api.url}/sessions/${a1}/attachments/${sha.toUpperCase()}`, { headers: { "x-api-key": ALICE } })).status).toBe(200);
  });
});
