/**
 * `GET /sessions/{id}/attachments` and `GET`/`HEAD /sessions/{id}/attachments/{sha256}` over
 * real loopback HTTP, on SQLite and PostgreSQL: the bytes streamed with their stored type,
 * length, file name and the safety headers; caching (ETag, 304); the list; a reference whose
 * bytes are not stored; an attachment the session does not refer to; the OpenAPI document.
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, call, closeServers, seed, startApi } from "./api-harness.js";
import { attach, PDF_BYTES, PNG_BYTES, sha256Of, wavBytes } from "./attachment-fixtures.js";

afterEach(closeServers);

const CSP = "sandbox; default-src 'none'";

forEachBackend((backend) => {
  it("serves an image inline and other files as attachments, with type, length, name, nosniff, sandbox CSP and caching", async () => {
    const { db } = await backend.fresh();
    const { a1 } = await seed(db);
    const wav = wavBytes();
    const [png, audio, pdf] = await attach(
      db,
      a1,
      [
        { bytes: PNG_BYTES, kind: "image", mimeType: "image/png", fileName: "photo.png", caption: "the view" },
        { bytes: wav, kind: "audio", mimeType: "audio/wav", voice: true },
        { bytes: PDF_BYTES, kind: "file", mimeType: "application/pdf", fileName: 'Résumé "final".pdf' },
      ],
      "look at these",
    );
    const api = await startApi(db);

    const image = await fetch(`${api.url}/sessions/${a1}/attachments/${png!.sha256}`, { headers: { "x-api-key": ALICE } });
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG_BYTES);
    const headers: Record<string, string> = {};
    image.headers.forEach((value, name) => {
      if (!["date", "x-request-id", "connection", "keep-alive"].includes(name)) headers[name] = value;
    });
    expect(headers).toEqual({
      "content-type": "image/png",
      "content-length": String(PNG_BYTES.length),
      "content-disposition": `inline; filename="photo.png"; filename*=UTF-8''photo.png`,
      "x-content-type-options": "nosniff",
      "content-security-policy": CSP,
      "cache-control": "private, max-age=86400, immutable",
      vary: "authorization, x-api-key",
      etag: `"${png!.sha256}"`,
      "cross-origin-resource-policy": "same-origin",
    });

    const sound = await fetch(`${api.url}/sessions/${a1}/attachments/${audio!.sha256}`, { headers: { "x-api-key": ALICE } });
    expect(Buffer.from(await sound.arrayBuffer())).toEqual(wav);
    expect(sound.headers.get("content-type")).toBe("audio/wav");
    // Not a raster image: an attachment, named after its hash and type when the sender gave no name.
    expect(sound.headers.get("content-disposition")).toBe(
      `attachment; filename="attachment-${audio!.sha256.slice(0, 12)}.wav"; filename*=UTF-8''attachment-${audio!.sha256.slice(0, 12)}.wav`,
    );

    const doc = await fetch(`${api.url}/sessions/${a1}/attachments/${pdf!.sha256.toUpperCase()}`, { headers: { "x-api-key": ALICE } });
    expect(doc.status).toBe(200);
    expect(Buffer.from(await doc.arrayBuffer())).toEqual(PDF_BYTES);
    expect(doc.headers.get("content-disposition")).toBe(`attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`);
    expect(doc.headers.get("x-content-type-options")).toBe("nosniff");
    expect(doc.headers.get("content-security-policy")).toBe(CSP);

    // HEAD: the same headers, no body.
    const head = await fetch(`${api.url}/sessions/${a1}/attachments/${pdf!.sha256}`, { method: "HEAD", headers: { "x-api-key": ALICE } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(PDF_BYTES.length));
    expect(head.headers.get("content-type")).toBe("application/pdf");
    expect(await head.text()).toBe("");

    // The bytes never change: a client holding the ETag gets 304.
    const again = await call(api, "GET", `/sessions/${a1}/attachments/${png!.sha256}`, { key: ALICE, headers: { "if-none-match": `"${png!.sha256}"` } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  it("lists a session's attachments; a reference whose bytes are not stored is listed as such and its GET says why", async () => {
    const { db } = await backend.fresh();
    const { a1, a2 } = await seed(db);
    const missing = sha256Of(Buffer.from("bytes that were exported with --media skip"));
    const [png] = await attach(db, a1, [{ bytes: PNG_BYTES, kind: "image", mimeType: "image/png", fileName: "photo.png" }]);
    await attach(db, a1, [{ bytes: null, sha256: missing, kind: "file", mimeType: "application/pdf", fileName: "gone.pdf" }], "the report");
    const api = await startApi(db);

    const list = await call(api, "GET", `/sessions/${a1}/attachments`, { key: ALICE });
    expect(list.status).toBe(200);
    expect(list.body.items).toMatchObject([
      { sessionId: a1, sha256: png!.sha256, kind: "image", mimeType: "image/png", size: PNG_BYTES.length, fileName: "photo.png", stored: true },
      { sessionId: a1, sha256: missing, kind: "file", mimeType: "application/pdf", fileName: "gone.pdf", stored: false },
    ]);
    expect(typeof list.body.items[0].messageId).toBe("number");
    expect((await call(api, "GET", `/sessions/${a2}/attachments`, { key: ALICE })).body).toEqual({ items: [] });

    const gone = await call(api, "GET", `/sessions/${a1}/attachments/${missing}`, { key: ALICE });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("TL_ERR_NOT_FOUND");
    expect(gone.body.error.message).toMatch(/is not stored: the session was imported from a copy exported without media/u);
    expect(gone.body.error.details).toEqual({ sha256: missing, stored: false });
    expect(gone.headers.get("content-disposition")).toBeNull();

    // Stored bytes that this session does not refer to are not found through it.
    const elsewhere = await call(api, "GET", `/sessions/${a2}/attachments/${png!.sha256}`, { key: ALICE });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.message).toBe(`Session '${a2}' has no attachment ${png!.sha256}.`);
  });
});

it("publishes the attachment routes in the OpenAPI document", async () => {
  const { openSessionDB } = await import("../../src/index.js");
  const db = await openSessionDB(":memory:");
  try {
    const api = await startApi(db);
    const doc = (await call(api, "GET", "/openapi.json")).body;
    expect(Object.keys(doc.paths["/sessions/{id}/attachments/{sha256}"]).sort()).toEqual(["get", "head"]);
    expect(doc.paths["/sessions/{id}/attachments/{sha256}"].get.operationId).toBe("getSessionAttachment");
    expect(doc.paths["/sessions/{id}/attachments"].get.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/SessionAttachmentList",
    });
    expect(doc.components.schemas.SessionAttachment.properties.stored).toMatchObject({ type: "boolean" });
  } finally {
    await closeServers();
    await db.close();
  }
});
