/**
 * The Matrix event → SessionSource mapping and the outbound event contents, as plain
 * functions, on the documented payloads of the fake's fixtures.
 */
import { describe, expect, it } from "vitest";
import {
  MATRIX_CONTENT_BYTES_MAX,
  MATRIX_MESSAGE_LIMIT,
  mapMatrixEvent,
  markdownToMatrixHtml,
  matrixEditContent,
  matrixMessageContents,
  matrixRelations,
  stripReplyFallback,
  type MatrixRawEvent,
  type MatrixRoomFacts,
} from "../../../src/adapters/matrix/index.js";
import { buildSessionKey } from "../../../src/gateway/index.js";
import { matrixFixture } from "../../fakes/matrix/fake-matrix-homeserver.js";

const BOT = { userId: "@threadline:example.org", displayName: "Threadline" };
const ALICE = "@alice:example.org";
const members = (...ids: string[]): Map<string, string | null> =>
  new Map(ids.map((id) => [id, id === ALICE ? "Alice" : id === BOT.userId ? "Threadline" : null]));
const group: MatrixRoomFacts = {
  roomId: "!room:example.org",
  name: "General",
  topic: "the topic",
  direct: false,
  members: members(BOT.userId, ALICE, "@bob:example.org"),
};
const dm: MatrixRoomFacts = { roomId: "!dm:example.org", name: null, topic: null, direct: true, members: members(BOT.userId, ALICE) };
const none = { repliesToBot: false, inBotThread: false };

function event(fixture: string, overrides: { content?: Record<string, unknown>; sender?: string; event_id?: string } = {}): MatrixRawEvent {
  const base = matrixFixture<MatrixRawEvent>(fixture);
  return {
    ...base,
    sender: overrides.sender ?? ALICE,
    event_id: overrides.event_id ?? base.event_id,
    content: { ...base.content, ...(overrides.content ?? {}) },
  };
}

describe("mapMatrixEvent", () => {
  it("a direct room is a dm keyed by the room; another room a group per user; a thread in a group one shared session", () => {
    const inDm = mapMatrixEvent(event("event-message-text", { content: { body: "hi there" } }), dm, BOT, none)!;
    expect(inDm.inbound).toMatchObject({ text: "hi there", messageId: "$143273582443PhrSn:example.org" });
    expect(inDm.inbound.source).toMatchObject({
      platform: "matrix",
      chatType: "dm",
      chatId: "!dm:example.org",
      chatName: "Alice",
      userId: ALICE,
      userName: "Alice",
      threadId: null,
      isBot: false,
    });
    expect(buildSessionKey(inDm.inbound.source)).toBe("agent:main:matrix:dm:!dm%3Aexample.org");
    expect(inDm.candidate).toMatchObject({ chatType: "dm", fromSelf: false, fromBot: false });

    const inGroup = mapMatrixEvent(event("event-message-text"), group, BOT, none)!;
    expect(inGroup.inbound.source).toMatchObject({ chatType: "group", chatId: "!room:example.org", chatName: "General", chatTopic: "the topic" });
    expect(buildSessionKey(inGroup.inbound.source)).toBe("agent:main:matrix:group:!room%3Aexample.org:@alice%3Aexample.org");

    const inThread = mapMatrixEvent(event("event-message-thread"), group, BOT, { repliesToBot: false, inBotThread: true })!;
    expect(inThread.inbound.source).toMatchObject({
      chatType: "thread",
      chatId: "!room:example.org",
      threadId: "$thread_root:example.org",
      parentChatId: "!room:example.org",
    });
    expect(inThread.candidate.inBotThread).toBe(true);
    expect(buildSessionKey(inThread.inbound.source)).toBe("agent:main:matrix:thread:!room%3Aexample.org:$thread_root%3Aexample.org");
    // In a direct room a thread stays in the DM's session family.
    expect(mapMatrixEvent(event("event-message-thread"), dm, BOT, none)!.inbound.source).toMatchObject({
      chatType: "dm",
      threadId: "$thread_root:example.org",
    });
  });

  it("mentions: m.mentions, the user id, the display name, a pill; a leading address is stripped; nothing else counts", () => {
    const byIntent = mapMatrixEvent(event("event-message-text", { content: { body: "hello", "m.mentions": { user_ids: [BOT.userId] } } }), group, BOT, none)!;
    expect(byIntent.candidate.mentionsBot).toBe(true);
    const byName = mapMatrixEvent(event("event-message-text", { content: { body: "Threadline: what is up?" } }), group, BOT, none)!;
    expect(byName.candidate.mentionsBot).toBe(true);
    expect(byName.inbound.text).toBe("what is up?");
    // Element takes a leading "/" for its own commands: addressing the bot first sends a gateway command.
    expect(mapMatrixEvent(event("event-message-text", { content: { body: "Threadline: /new" } }), dm, BOT, none)!.inbound.text).toBe("/new");
    const byId = mapMatrixEvent(event("event-message-text", { content: { body: "@threadline:example.org, hi" } }), group, BOT, none)!;
    expect([byId.candidate.mentionsBot, byId.inbound.text]).toEqual([true, "hi"]);
    const byPill = mapMatrixEvent(
      event("event-message-text", { content: { body: "ask him", formatted_body: '<a href="https://matrix.to/#/@threadline:example.org">him</a>' } }),
      group,
      BOT,
      none,
    )!;
    expect(byPill.candidate.mentionsBot).toBe(true);
    const notAddressed = mapMatrixEvent(event("event-message-text", { content: { body: "threadlines are nice" } }), group, BOT, none)!;
    expect(notAddressed.candidate).toMatchObject({ mentionsBot: false, repliesToBot: false, inBotThread: false });
  });

  it("a reply loses its fallback (and the fallback's mention of the bot does not count as one); an edit is a new message with the new text", () => {
    const reply = mapMatrixEvent(event("event-message-reply", { content: { "m.mentions": {} } }), group, BOT, { repliesToBot: true, inBotThread: false })!;
    expect(reply.inbound.text).toBe("This is where the reply goes");
    expect(reply.candidate).toMatchObject({ repliesToBot: true, mentionsBot: false });
    expect(matrixRelations(event("event-message-reply").content)).toEqual({
      replyTo: "$another:event.com",
      threadRoot: null,
      replyIsFallback: false,
      edits: null,
    });
    const edit = mapMatrixEvent(
      event("event-message-text", {
        event_id: "$edit:example.org",
        content: {
          body: "* fixed",
          "m.new_content": { msgtype: "m.text", body: "fixed" },
          "m.relates_to": { rel_type: "m.replace", event_id: "$orig:example.org" },
        },
      }),
      dm,
      BOT,
      none,
    )!;
    expect(edit.inbound).toMatchObject({ text: "fixed", messageId: "$edit:example.org", editOf: "$orig:example.org" });
    expect(stripReplyFallback("> quoted by hand\n\nnot a fallback")).toBe("> quoted by hand\n\nnot a fallback");
    expect(stripReplyFallback("> <@a:b.c> line one\n> line two\n\nanswer\nmore")).toBe("answer\nmore");
  });

  it("media become attachments with the mxc URL, MIME type and file name; a caption is the text", () => {
    const image = mapMatrixEvent(event("event-message-image"), dm, BOT, none)!;
    expect(image.inbound.text).toBe("");
    expect(image.inbound.media).toEqual([
      {
        kind: "image",
        url: "mxc://example.org/JWEIFJgwEIhweiWJE",
        mimeType: "image/jpeg",
        fileName: "filename.jpg",
        caption: null,
        size: 31037,
        meta: { width: 394, height: 398 },
      },
    ]);
    // A voice note (MSC3245, as Element sends it): audio with voice: true and its duration; no caption.
    const voice = mapMatrixEvent(event("event-message-voice"), dm, BOT, none)!;
    expect(voice.inbound.text).toBe("");
    expect(voice.inbound.media).toEqual([
      {
        kind: "audio",
        url: "mxc://example.org/VoiceNoteMediaId4200",
        mimeType: "audio/ogg",
        fileName: "Voice message",
        caption: null,
        size: 8034,
        voice: true,
        meta: { durationSeconds: 4.2 },
      },
    ]);
    // An http(s) URL in an event is never taken as the file's address.
    const remote = mapMatrixEvent(
      event("event-message-image", { content: { msgtype: "m.image", body: "x.png", url: "https://evil.example/x.png", info: { mimetype: "image/png" } } }),
      dm,
      BOT,
      none,
    )!;
    expect(remote.inbound.media![0]!.url).toBeNull();
    const captioned = mapMatrixEvent(
      event("event-message-image", {
        content: { msgtype: "m.file", body: "the report", filename: "report.pdf", info: { mimetype: "application/pdf" }, url: "mxc://example.org/abc" },
      }),
      dm,
      BOT,
      none,
    )!;
    expect(captioned.inbound.text).toBe("the report");
    expect(captioned.inbound.media).toEqual([
      { kind: "file", url: "mxc://example.org/abc", mimeType: "application/pdf", fileName: "report.pdf", caption: "the report" },
    ]);
  });

  it("notices count as a bot's; the bot's own messages are its own; other event types and empty messages map to nothing", () => {
    const notice = mapMatrixEvent(event("event-message-notice"), dm, BOT, none)!;
    expect(notice.candidate).toMatchObject({ fromBot: true });
    expect(notice.inbound.source.isBot).toBe(true);
    expect(mapMatrixEvent(event("event-message-text", { sender: BOT.userId }), dm, BOT, none)!.candidate.fromSelf).toBe(true);
    expect(mapMatrixEvent(event("event-encrypted"), dm, BOT, none)).toBeNull();
    expect(mapMatrixEvent(event("event-message-text", { content: { body: "   " } }), dm, BOT, none)).toBeNull();
    expect(mapMatrixEvent(event("event-message-text", { content: { body: "Threadline:" } }), group, BOT, none)!.inbound.text).toBe("Threadline:");
  });
});

describe("matrixMessageContents", () => {
  it("a reply: m.text with the Markdown as body and its HTML, a reply relation and the replied-to author as the only mention", () => {
    const [content, ...rest] = matrixMessageContents("**Hi** `a<b` & <script>alert(1)</script> @room", {
      kind: "reply",
      replyTo: "$trigger:example.org",
      threadId: null,
      replyToUser: ALICE,
    });
    expect(rest).toEqual([]);
    expect(content).toEqual({
      msgtype: "m.text",
      body: "**Hi** `a<b` & <script>alert(1)</script> @room",
      format: "org.matrix.custom.html",
      formatted_body: "<strong>Hi</strong> <code>a&lt;b</code> &amp; &lt;script&gt;alert(1)&lt;/script&gt; @room",
      "m.mentions": { user_ids: [ALICE] },
      "m.relates_to": { "m.in_reply_to": { event_id: "$trigger:example.org" } },
    });
  });

  it("in a thread every chunk carries m.thread with the fallback reply; notices are plain m.notice; long text splits within the byte limit", () => {
    const [notice] = matrixMessageContents("Started a new session (x)", { kind: "notice", replyTo: "$t:example.org", threadId: "$root:example.org" });
    expect(notice).toEqual({
      msgtype: "m.notice",
      body: "Started a new session (x)",
      "m.mentions": {},
      "m.relates_to": { rel_type: "m.thread", event_id: "$root:example.org", is_falling_back: true, "m.in_reply_to": { event_id: "$t:example.org" } },
    });
    const paragraph = "Ünïcödé wörds ".repeat(40).trim();
    const long = Array.from({ length: 60 }, (_, i) => `${i}: ${paragraph}`).join("\n\n");
    expect(Buffer.byteLength(long)).toBeGreaterThan(2 * MATRIX_MESSAGE_LIMIT);
    const chunks = matrixMessageContents(long, { kind: "reply", replyTo: "$t:example.org", threadId: null, replyToUser: ALICE });
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) expect(Buffer.byteLength(chunk.body)).toBeLessThanOrEqual(MATRIX_MESSAGE_LIMIT);
    expect(chunks.map((c) => c.body).join("\n\n")).toBe(long);
    const later = chunks.slice(1);
    expect(chunks.map((c) => c["m.relates_to"] ?? null)).toEqual([{ "m.in_reply_to": { event_id: "$t:example.org" } }, ...later.map(() => null)]);
    expect(chunks.map((c) => c["m.mentions"])).toEqual([{ user_ids: [ALICE] }, ...later.map(() => ({}))]);
    const inThread = matrixMessageContents(long, { kind: "reply", replyTo: null, threadId: "$root:example.org" });
    expect(inThread.every((c) => c["m.relates_to"]?.rel_type === "m.thread" && c["m.relates_to"]["m.in_reply_to"]?.event_id === "$root:example.org")).toBe(
      true,
    );
    expect(matrixMessageContents("  ", { kind: "reply", replyTo: null, threadId: null })).toEqual([]);
  });

  it("a chunk whose HTML would make the event too large goes without it", () => {
    const angles = "<".repeat(MATRIX_MESSAGE_LIMIT);
    const [content] = matrixMessageContents(angles, { kind: "reply", replyTo: null, threadId: null });
    expect(content!.body).toBe(angles);
    expect(content!.formatted_body).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(content))).toBeLessThanOrEqual(MATRIX_CONTENT_BYTES_MAX);
  });
});

describe("matrixEditContent", () => {
  it("an edit replaces the event with m.new_content and shows `* text` to clients without edits", () => {
    expect(matrixEditContent("$ev:example.org", "now **fixed**")).toEqual({
      msgtype: "m.text",
      body: "* now **fixed**",
      "m.mentions": {},
      "m.new_content": {
        msgtype: "m.text",
        body: "now **fixed**",
        format: "org.matrix.custom.html",
        formatted_body: "now <strong>fixed</strong>",
        "m.mentions": {},
      },
      "m.relates_to": { rel_type: "m.replace", event_id: "$ev:example.org" },
    });
  });
});

describe("markdownToMatrixHtml", () => {
  it("renders the Markdown Matrix clients show; raw HTML is escaped, unsafe links and images are not kept as such", () => {
    expect(markdownToMatrixHtml("plain & simple")).toBe("plain &amp; simple");
    expect(markdownToMatrixHtml("# Title\n\n- one\n- [x] done\n\n> quoted")).toBe(
      "<h1>Title</h1>\n<ul>\n<li>one</li>\n<li>[x] done</li>\n</ul>\n<blockquote>\n<p>quoted</p>\n</blockquote>",
    );
    expect(markdownToMatrixHtml("```ts\nconst a = 1 < 2;\n```")).toBe('<pre><code class="language-ts">const a = 1 &lt; 2;\n</code></pre>');
    expect(markdownToMatrixHtml("[site](https://example.org) [bad](javascript:alert(1)) ![pic](https://example.org/p.png)")).toBe(
      '<a href="https://example.org">site</a> bad <a href="https://example.org/p.png">pic</a>',
    );
    expect(markdownToMatrixHtml("<img src=x onerror=alert(1)>")).toBe("&lt;img src=x onerror=alert(1)&gt;");
    expect(markdownToMatrixHtml("| a | b |\n|:-|-:|\n| 1 | 2 |")).toBe(
      "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody><tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody></table>",
    );
  });
});
