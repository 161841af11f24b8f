import { afterEach, describe, expect, it } from "vitest";
import { FAKE_IMAGE_REJECTIONS, startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-server.js";

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

function upload(fields: Record<string, string>, file?: { bytes: Uint8Array<ArrayBuffer>; name: string; type: string }): FormData {
  const form = new FormData();
  if (file !== undefined) form.append("file", new Blob([file.bytes], { type: file.type }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

const IMAGE_MESSAGE = {
  role: "user",
  content: [
    { type: "text", text: "what is this?" },
    { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
  ],
};

describe("the fake provider's transcription endpoint", () => {
  it("parses the multipart upload, records it, and answers { text } (default: the byte count)", async () => {
    server = await startFakeOpenAiServer({ apiKey: "sk-test" });
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 1, 2, 255]);
    const response = await fetch(`${server.url}/audio/transcriptions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-test" },
      body: upload({ model: "whisper-1", response_format: "json" }, { bytes, name: "voice.ogg", type: "audio/ogg" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: "Transcript of 8 bytes" });
    expect(server.transcriptions).toHaveLength(1);
    expect(server.transcriptions[0]).toMatchObject({ model: "whisper-1", fileName: "voice.ogg", mimeType: "audio/ogg", responseFormat: "json" });
    expect([...server.transcriptions[0]!.bytes]).toEqual([...bytes]);
    expect(server.requests[0]).toMatchObject({ kind: "transcription", path: "/v1/audio/transcriptions" });
  });

  it("answers from the transcript option, as plain text with response_format=text, and refuses a missing model or key", async () => {
    server = await startFakeOpenAiServer({ apiKey: "sk-test", transcript: (file) => `heard ${file.fileName}` });
    const file = { bytes: new Uint8Array([1, 2, 3]), name: "a.mp3", type: "audio/mpeg" };
    const text = await fetch(`${server.url}/audio/transcriptions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-test" },
      body: upload({ model: "whisper-1", response_format: "text" }, file),
    });
    expect(await text.text()).toBe("heard a.mp3");

    const noModel = await fetch(`${server.url}/audio/transcriptions`, { method: "POST", headers: { authorization: "Bearer sk-test" }, body: upload({}, file) });
    expect(noModel.status).toBe(400);
    const noKey = await fetch(`${server.url}/audio/transcriptions`, { method: "POST", body: upload({ model: "whisper-1" }, file) });
    expect(noKey.status).toBe(401);
    // Refused uploads are recorded too.
    expect(server.transcriptions.map((entry) => entry.model)).toEqual(["whisper-1", "", "whisper-1"]);
  });
});

describe("the fake provider's rejectImages option", () => {
  for (const [wording, refusal] of Object.entries(FAKE_IMAGE_REJECTIONS)) {
    it(`refuses a chat request carrying an image part, worded like ${wording}; text-only requests are answered`, async () => {
      server = await startFakeOpenAiServer({ rejectImages: wording as keyof typeof FAKE_IMAGE_REJECTIONS });
      const refused = await fetch(`${server.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m1", messages: [IMAGE_MESSAGE] }),
      });
      expect(refused.status).toBe(refusal.status);
      const body = (await refused.json()) as { error: string | { message: string } };
      const message = typeof body.error === "string" ? body.error : body.error.message;
      expect(message).toBe(refusal.message("m1"));

      const answered = await fetch(`${server.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "just text" }] }),
      });
      expect(answered.status).toBe(200);
    });
  }
});
