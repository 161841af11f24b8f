/**
 * The media step of a turn, end to end through the gateway: a test adapter whose
 * `fetchMedia` downloads from a real HTTP server on loopback (as a platform's file API), a
 * real store on both backends, and the OpenAI-compatible agent against the fake provider.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { OpenAiCompatibleAgent } from "../../src/agents/index.js";
import { GatewayRunner, MediaUnavailableError, SessionRouter, type FetchedMedia, type InboundMedia, type MediaFetchRequest } from "../../src/gateway/index.js";
import { mediaTempDir, type MediaSettings } from "../../src/media/index.js";
import type { ContentPart, Message as StoredMessage } from "../../src/store/index.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../media/fixtures/${name}`, import.meta.url)));
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** A platform's file API on loopback: files by id, with or without a Content-Length. */
class FileServer {
  readonly files = new Map<string, { bytes: Uint8Array; type: string; announceLength: boolean }>();
  readonly requested: string[] = [];
  /** Files whose download starts and never ends. */
  readonly stalled = new Set<string>();
  #server: Server | null = null;
  url = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const id = decodeURIComponent((req.url ?? "").replace(/^\/files\//u, ""));
      this.requested.push(id);
      if (this.stalled.has(id)) {
        res.writeHead(200, { "content-type": "image/jpeg" });
        res.write(new Uint8Array([0xff, 0xd8, 0xff]));
        return;
      }
      const file = this.files.get(id);
      if (file === undefined) {
        res.writeHead(404).end();
        return;
      }
      const headers: Record<string, string> = { "content-type": file.type };
      if (file.announceLength) headers["content-length"] = String(file.bytes.byteLength);
      res.writeHead(200, headers);
      // Written in pieces: a body without a length arrives chunked, as a stream does.
      for (let at = 0; at < file.bytes.byteLength; at += 512) res.write(file.bytes.subarray(at, at + 512));
      res.end();
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  add(id: string, bytes: Uint8Array, type: string, announceLength = true): void {
    this.files.set(id, { bytes, type, announceLength });
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server === null ? resolve() : this.#server.close(() => resolve())));
  }
}

/** A chat platform whose attachments are fetched from its file API with real `fetch`. */
class MediaAdapter extends LocalAdapter {
  constructor(readonly files: FileServer) {
    super();
  }

  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    if (media.fileId === "expired") throw new MediaUnavailableError("This platform keeps files for 30 days, and this one is older.");
    const response = await fetch(`${this.files.url}/files/${encodeURIComponent(media.fileId ?? "")}`, { signal: request.signal });
    if (!response.ok || response.body === null) throw new Error(`the file API answered ${response.status}`);
    const length = response.headers.get("content-length");
    return { body: response.body, size: length === null ? null : Number(length), mimeType: response.headers.get("content-type") };
  }
}

const partsOf = (message: StoredMessage | undefined): ContentPart[] => (Array.isArray(message?.content) ? (message.content as ContentPart[]) : []);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

forEachBackend((backend) => {
  async function setup(options: { media?: Partial<MediaSettings>; transcript?: string } = {}) {
    const { db } = await backend.fresh();
    const files = new FileServer();
    await files.start();
    const provider: FakeOpenAiServer = await startFakeOpenAiServer(options.transcript === undefined ? {} : { transcript: options.transcript });
    cleanups.push(
      () => files.close(),
      () => provider.close(),
    );
    const adapter = new MediaAdapter(files);
    // Voice is on when the test gives the provider's transcription model something to say.
    const model = () =>
      new OpenAiCompatibleAgent({
        baseUrl: provider.url,
        apiKey: "sk-test",
        model: "fake-model",
        ...(options.transcript === undefined ? {} : { transcriptionModel: "whisper-1" }),
      });
    const runner = new GatewayRunner({
      store: new SessionRouter({ db }),
      agentFactory: model,
      adapters: [adapter],
      ...(options.media === undefined ? {} : { media: options.media }),
    });
    await runner.start();
    cleanups.push(() => runner.stop());
    /** The user messages of the chat's session, once `count` are stored. */
    const userMessages = async (count: number): Promise<StoredMessage[]> => {
      const route = await waitFor(async () => (await db.listRoutes()).items.find((r) => r.key.includes("local")), { what: "the chat's session" });
      return waitFor(
        async () => {
          const users = (await db.getMessages(route.sessionId)).filter((m) => m.role === "user");
          return users.length >= count ? users : null;
        },
        { what: `${count} stored user message(s)` },
      );
    };
    return { db, files, provider, adapter, runner, userMessages };
  }

  it("a photo is downloaded through the platform, kept in the store and referred to by the stored user message", async () => {
    const { db, files, provider, adapter, userMessages } = await setup();
    const photo = fixture("pixel.jpg");
    files.add("photo-1", photo, "image/jpeg");
    const ack = await adapter.receive(
      "what is in this picture?",
      {},
      {
        media: [{ kind: "image", fileId: "photo-1", mimeType: "image/jpeg", caption: "my cat", meta: { width: 1, height: 1 } }],
      },
    );
    expect(ack.status).toBe("queued");
    const reply = await adapter.nextMessage((d) => d.message.kind === "reply");
    expect(reply.message.text).toBe("Reply to: what is in this picture?");
    const [stored] = await userMessages(1);
    expect(partsOf(stored)).toEqual([
      { type: "text", text: "what is in this picture?" },
      {
        type: "attachment",
        attachment: {
          sha256: sha256(photo),
          kind: "image",
          mimeType: "image/jpeg",
          size: photo.byteLength,
          fileName: null,
          caption: "my cat",
          meta: { width: 1, height: 1 },
        },
      },
    ]);
    expect(Buffer.from((await db.readMedia(sha256(photo)))!)).toEqual(Buffer.from(photo));
    expect(files.requested).toEqual(["photo-1"]);
    expect(provider.chatRequests()).toHaveLength(1);
    // The model got the photo as an image part carrying exactly the bytes the platform served.
    const sent = provider.chatRequests()[0]!.body!.messages!.at(-1)!;
    expect(sent.content).toContainEqual({ type: "image_url", image_url: { url: `data:image/jpeg;base64,${Buffer.from(photo).toString("base64")}` } });
    // No notice: everything was kept.
    expect(adapter.sent.filter((d) => d.message.kind !== "reply")).toEqual([]);
    // The temp file the download went through is gone.
    expect(readdirSync(await mediaTempDir())).toEqual([]);
  });

  it("a file over the limit is refused (by its declared size before downloading, or while counting) and the text still goes through", async () => {
    const { files, provider, adapter, userMessages } = await setup({ media: { maxBytes: 1024 } });
    const big = new Uint8Array(4096).fill(7);
    files.add("streamed", big, "image/png", false);
    await adapter.receive("look at this", {}, { media: [{ kind: "image", fileId: "streamed", mimeType: "image/png" }] });
    const notice = await adapter.nextMessage((d) => d.message.kind === "notice");
    expect(notice.message.text).toBe("Your photo was not kept: it is larger than the limit of 1 KB. The text of your message went through.");
    // The model is told what was not kept.
    expect((await adapter.nextMessage((d) => d.message.kind === "reply")).message.text).toBe(
      "Reply to: look at this [image not kept: it is larger than the limit of 1 KB]",
    );

    await adapter.receive("and this one", {}, { media: [{ kind: "file", fileId: "declared", fileName: "big.bin", size: 25 * 1024 * 1024 + 300_000 }] });
    const second = await adapter.nextMessage((d) => d.message.kind === "notice");
    expect(second.message.text).toBe('Your file "big.bin" was not kept: it is 25.3 MB and the limit is 1 KB. The text of your message went through.');
    await adapter.nextMessage((d) => d.message.kind === "reply");
    // The declared size was enough: that file was never asked for.
    expect(files.requested).toEqual(["streamed"]);
    const users = await userMessages(2);
    expect(partsOf(users[0])).toEqual([
      { type: "text", text: "look at this" },
      { type: "text", text: "[image not kept: it is larger than the limit of 1 KB]" },
    ]);
    expect(partsOf(users[1])[1]).toEqual({ type: "text", text: "[file not kept: it is 25.3 MB and the limit is 1 KB]" });
    expect(provider.chatRequests()).toHaveLength(2);
  });

  it("a file the platform will not give, or whose download takes too long, is refused with the reason", async () => {
    const { files, adapter, userMessages } = await setup({ media: { downloadTimeoutSeconds: 0.5 } });
    files.stalled.add("slow");
    await adapter.receive(
      "two photos",
      {},
      {
        media: [
          { kind: "image", fileId: "expired" },
          { kind: "image", fileId: "slow" },
        ],
      },
    );
    const notice = await adapter.nextMessage((d) => d.message.kind === "notice");
    expect(notice.message.text).toBe(
      "Your photo was not kept: This platform keeps files for 30 days, and this one is older. " +
        "Your photo was not kept: the download took longer than 0.5 seconds. The text of your message went through.",
    );
    await adapter.nextMessage((d) => d.message.kind === "reply");
    const [stored] = await userMessages(1);
    expect(partsOf(stored).slice(1)).toEqual([
      { type: "text", text: "[image not kept: This platform keeps files for 30 days, and this one is older]" },
      { type: "text", text: "[image not kept: the download took longer than 0.5 seconds]" },
    ]);
  });

  it("a program is refused whatever it was sent as", async () => {
    const { files, adapter, userMessages, db } = await setup();
    const elf = fixture("program.elf");
    files.add("tool", elf, "application/pdf");
    await adapter.receive("here is the report", {}, { media: [{ kind: "file", fileId: "tool", fileName: "report.pdf", mimeType: "application/pdf" }] });
    const notice = await adapter.nextMessage((d) => d.message.kind === "notice");
    expect(notice.message.text).toBe(
      'Your file "report.pdf" was not kept: it is a program (application/x-elf), and programs are not accepted. The text of your message went through.',
    );
    await adapter.nextMessage((d) => d.message.kind === "reply");
    const [stored] = await userMessages(1);
    expect(partsOf(stored)[1]).toEqual({ type: "text", text: "[file not kept: it is a program (application/x-elf), and programs are not accepted]" });
    expect(await db.getMedia(sha256(elf))).toBeNull();
  });

  it("an album sent while the session is busy is one turn whose messages carry every photo", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { files, provider, adapter, userMessages, db } = await setup();
    provider.setScript(async (request) => {
      const body = request.body as { messages?: Array<{ role: string; content?: unknown }> };
      if (body.messages?.some((m) => m.content === "hold on")) await held;
      return null;
    });
    const photos = [fixture("pixel.png"), fixture("pixel.jpg"), new Uint8Array([...fixture("pixel.png"), 0])];
    for (const [i, bytes] of photos.entries()) files.add(`album-${i}`, bytes, "image/png");
    await adapter.receive("hold on");
    await waitFor(() => provider.chatRequests().length === 1, { what: "the first turn's model call" });
    for (const [i] of photos.entries()) {
      await adapter.receive(i === 0 ? "our holiday" : "", {}, { albumId: "album-A", media: [{ kind: "image", fileId: `album-${i}`, mimeType: "image/png" }] });
    }
    release();
    await adapter.nextMessage((d) => d.message.kind === "reply" && d.message.text === "Reply to: hold on");
    await adapter.nextMessage((d) => d.message.kind === "reply");
    expect(provider.chatRequests()).toHaveLength(2);
    const users = await userMessages(4);
    const attachments = users.slice(1).flatMap((m) => partsOf(m).filter((p) => p.type === "attachment"));
    expect(attachments.map((p) => (p as unknown as { attachment: { sha256: string } }).attachment.sha256)).toEqual(photos.map(sha256));
    for (const bytes of photos) expect(await db.getMedia(sha256(bytes))).toMatchObject({ size: bytes.byteLength });
    // One turn: the three messages are answered by one reply.
    const all = await db.getMessages(users[0]!.sessionId);
    expect(all.map((m) => m.role)).toEqual(["user", "assistant", "user", "user", "user", "assistant"]);
  });

  it("a voice note without transcription is kept, the chat is told, and no model call is made", async () => {
    const { files, provider, adapter, userMessages, db } = await setup();
    const voice = fixture("voice.ogg");
    files.add("voice-1", voice, "audio/ogg");
    await adapter.receive("", {}, { media: [{ kind: "audio", voice: true, fileId: "voice-1", mimeType: "audio/ogg", meta: { durationSeconds: 2 } }] });
    const told = await adapter.nextMessage((d) => d.message.kind !== "reply");
    expect(told.message).toMatchObject({
      kind: "error",
      refused: true,
      text: "Voice notes are not enabled here, so I cannot listen to yours. (The owner can enable them with provider.transcriptionModel, e.g. whisper-1.)",
    });
    const [stored] = await userMessages(1);
    expect(partsOf(stored)).toEqual([
      {
        type: "attachment",
        attachment: {
          sha256: sha256(voice),
          kind: "audio",
          mimeType: "audio/ogg",
          size: voice.byteLength,
          fileName: null,
          caption: null,
          voice: true,
          meta: { durationSeconds: 2 },
        },
      },
    ]);
    expect(await db.getMedia(sha256(voice))).toMatchObject({ mimeType: "audio/ogg" });
    expect(provider.chatRequests()).toHaveLength(0);
    // The turn ended cleanly: the next message is answered.
    await adapter.receive("are you there?");
    expect((await adapter.nextMessage((d) => d.message.kind === "reply")).message.text).toBe("Reply to: are you there?");
  });

  it("a transcribed voice note is the message's text: the model gets it and search finds it", async () => {
    const { files, provider, adapter, userMessages, db } = await setup({ transcript: "please remember to buy oat milk" });
    const voice = fixture("voice.ogg");
    files.add("voice-2", voice, "audio/ogg");
    await adapter.receive("", {}, { media: [{ kind: "audio", voice: true, fileId: "voice-2", mimeType: "audio/ogg" }] });
    const reply = await adapter.nextMessage((d) => d.message.kind === "reply");
    // The transcript reaches the model as the message's text (the audio itself as a note).
    expect(reply.message.text).toBe("Reply to: please remember to buy oat milk [voice note: transcribed above]");
    expect(provider.transcriptions).toHaveLength(1);
    expect(provider.transcriptions[0]).toMatchObject({ model: "whisper-1", mimeType: "audio/ogg" });
    expect(Buffer.from(provider.transcriptions[0]!.bytes)).toEqual(Buffer.from(voice));
    const [stored] = await userMessages(1);
    expect(partsOf(stored)).toEqual([
      { type: "text", text: "please remember to buy oat milk" },
      {
        type: "attachment",
        attachment: {
          sha256: sha256(voice),
          kind: "audio",
          mimeType: "audio/ogg",
          size: voice.byteLength,
          fileName: null,
          caption: null,
          voice: true,
          meta: { transcribed: true },
        },
      },
    ]);
    const hits = await db.searchMessages("oat milk");
    expect(hits.map((h) => h.messageId)).toContain(stored!.id);
    expect(provider.chatRequests()).toHaveLength(1);
    expect(adapter.sent.filter((d) => d.message.kind !== "reply")).toEqual([]);
  });

  it("a data: URL is decoded locally, never fetched", async () => {
    const { files, adapter, userMessages, db } = await setup();
    const png = fixture("pixel.png");
    await adapter.receive("from an API client", {}, { media: [{ kind: "image", url: `data:image/png;base64,${Buffer.from(png).toString("base64")}` }] });
    await adapter.nextMessage((d) => d.message.kind === "reply");
    const [stored] = await userMessages(1);
    expect(partsOf(stored)[1]).toMatchObject({ type: "attachment", attachment: { sha256: sha256(png), kind: "image", mimeType: "image/png" } });
    expect(await db.getMedia(sha256(png))).not.toBeNull();
    expect(files.requested).toEqual([]);
  });
});
