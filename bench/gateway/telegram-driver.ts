/**
 * The driver's Telegram side (`--platform telegram`): the fake Bot API of the tests
 * (test/fakes/telegram) runs here, in the driver process, on 127.0.0.1; the gateway's
 * grammY long-polls it. A conversation pushes its message as an update (which answers the
 * gateway's pending getUpdates) and waits until the bot's sendMessage replying to that
 * message reaches the fake; only then it sends the next one (closed loop, as over HTTP).
 */
import { performance } from "node:perf_hooks";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer, type SentTelegramMessage } from "../../test/fakes/telegram/fake-telegram-server.js";
import { benchText, type ConversationsJob, type ConversationsResult, type RequestSample, type TelegramFakeJob, type TelegramFakeResult } from "./protocol.js";

/** A reply that has not reached the fake this long after its message was pushed counts as an error. */
const REPLY_TIMEOUT_MS = 60_000;
/** DM chat ids (= user ids) handed out in order, so every conversation of every job is its own chat and session. */
const FIRST_CHAT_ID = 700_000_000;

let fake: FakeTelegramServer | null = null;
let nextChat = FIRST_CHAT_ID;
/** Waiting turns by `<chat id>:<message id>` (the message the reply answers). */
const waiting = new Map<string, (message: SentTelegramMessage) => void>();

function onSent(message: SentTelegramMessage): void {
  const key = `${message.chat_id}:${message.reply_to ?? ""}`;
  const done = waiting.get(key);
  if (done === undefined) return;
  waiting.delete(key);
  done(message);
}

/** Starts (once) or stops the fake. */
export async function telegramFake(job: TelegramFakeJob): Promise<TelegramFakeResult> {
  if (job.action === "start") {
    fake ??= await startFakeTelegramServer({ onSent });
    return { kind: "telegram-fake", apiRoot: fake.url, token: fake.token, getUpdatesCalls: fake.callsOf("getUpdates").length };
  }
  const calls = fake?.callsOf("getUpdates").length ?? 0;
  await fake?.close();
  fake = null;
  return { kind: "telegram-fake", apiRoot: "", token: "", getUpdatesCalls: calls };
}

/** One turn: push the update, wait for the reply to it (bounded). */
function turn(server: FakeTelegramServer, chatId: number, messageId: number, id: string): Promise<{ ms: number; reply: SentTelegramMessage | null }> {
  const key = `${chatId}:${messageId}`;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      waiting.delete(key);
      resolve({ ms: performance.now() - started, reply: null });
    }, REPLY_TIMEOUT_MS);
    waiting.set(key, (reply) => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - started, reply });
    });
    const started = performance.now();
    server.pushUpdate(
      telegramUpdate("update-private-text", {
        message_id: messageId,
        text: benchText(id),
        from: { id: chatId, first_name: "Bench", last_name: String(chatId), username: `bench${chatId}` },
        chat: { id: chatId, first_name: "Bench", last_name: String(chatId), username: `bench${chatId}` },
      }),
    );
  });
}

/** C closed-loop DM conversations through the fake. */
export async function telegramConversations(job: ConversationsJob): Promise<ConversationsResult> {
  const server = fake;
  if (server === null) throw new Error("the fake Telegram Bot API is not started (send a telegram-fake start job first)");
  const samples: RequestSample[] = [];
  const errorExamples: string[] = [];
  let errors = 0;
  const chats = Array.from({ length: job.concurrency }, () => nextChat++);
  const started = performance.now();
  await Promise.all(
    chats.map(async (chatId, c) => {
      for (let t = 0; t < job.turns; t++) {
        const id = `${job.tag}.${c}.${t}`;
        const issuedAtMs = performance.timeOrigin + performance.now();
        const { ms, reply } = await turn(server, chatId, t + 1, id);
        const ok = reply !== null && reply.plain === `Echo: ${benchText(id)}`;
        samples.push({ id, clientMs: ms, issuedAtMs, ok });
        if (!ok) {
          errors++;
          if (errorExamples.length < 5)
            errorExamples.push(
              `${id}: ${reply === null ? `no reply within ${REPLY_TIMEOUT_MS / 1000} s` : `reply ${JSON.stringify(reply.plain.slice(0, 200))}`}`,
            );
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { kind: "conversations", seconds, attempted: job.concurrency * job.turns, cutShort: false, samples, errors, errorExamples };
}
