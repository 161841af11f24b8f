/**
 * Slash commands every adapter understands: `/new`, `/reset`, `/stop`, `/resume`,
 * `/title`, `/undo`, `/retry`, `/queue`, `/compress`, `/status`, `/sethome`, `/pair`,
 * `/help`. They never reach the model (except `/compress`, which asks it for a summary,
 * and `/retry`, which runs the last message again).
 *
 * Admin-only (`adapters.<platform>.admins`, `gateway.admins`): `/sethome`, `/pair approve`,
 * and `/resume` of a session that was not started in this chat. A non-admin gets a clear
 * refusal and nothing changes.
 *
 * @module
 */
import { ConflictError, InvalidInputError, ThreadlineError, type HandoffStore, type MetaStore, type SessionHistory } from "../store/index.js";
import type { InboundMessage, OutboundMessage } from "./adapter.js";
import { OPERATOR_PLATFORMS, chatSafeErrorText, failureRef, modelFailureText, titleInUseText } from "./chat-safe-errors.js";
import type { PairingGateStore } from "./access-gate.js";
import type { HomeChannels } from "./handoff.js";
import { HANDOFF_MESSAGE_PREFIX } from "./handoff-worker.js";
import { effectiveHomeChannels, setHomeChannel } from "./home-channels.js";
import { SESSION_ID_PATTERN } from "./session-key.js";
import type { SessionQueue } from "./session-queue.js";
import type { SessionSource } from "./session-source.js";
import type { SessionRouter } from "./session-router.js";
import type { CompressOutcome } from "./session-compressor.js";

/** A parsed command. */
export interface SlashCommand {
  name: string;
  args: string;
}

/** What commands need from the runner. */
export interface CommandHost {
  readonly store: SessionRouter;
  readonly db: SessionHistory & MetaStore & HandoffStore;
  readonly queue: SessionQueue;
  isBusy(key: string): boolean;
  interrupt(key: string, reason: "stop" | "shutdown"): Promise<boolean>;
  runMessage(key: string, message: InboundMessage): Promise<void>;
  resumeQueue(key: string, source: SessionSource): Promise<void>;
  enqueue(key: string, message: InboundMessage): Promise<unknown>;
  /**
   * `/compress [focus]`: summarises the key's session and continues in a child session (the
   * automatic compression's code, run now; `focus` is what the summary should keep above all).
   */
  compress(key: string, source: SessionSource, focus: string | null): Promise<CompressOutcome>;
  notify(source: SessionSource, text: string, inReplyTo: string[], kind?: OutboundMessage["kind"], extra?: Pick<OutboundMessage, "refused">): Promise<void>;
  /** The home channels of the config file (`/sethome` ones are read from the database). */
  readonly configuredHomeChannels?: HomeChannels;
  /** Logs a failure the chat is told about only by its `ref` (a model provider's error). */
  logFailure?(ref: string, error: unknown, key: string): void;
  /** Whether the sender is an admin of their platform (default: everyone is). */
  isAdmin?(source: SessionSource): Promise<boolean>;
  /** Where pairing codes live (`/pair approve`); absent or `null`: pairing is not set up. */
  readonly pairing?: PairingGateStore | null;
}

/** The commands, with one line of help each. */
export const SLASH_COMMANDS: Readonly<Record<string, string>> = Object.freeze({
  new: "start a fresh session (the current one is kept in history)",
  reset: "same as /new",
  stop: "interrupt the running reply; your next message starts a new session",
  resume: "/resume [title|id]: switch to an earlier session (lists recent ones without an argument)",
  title: "/title [text]: show or set this session's title",
  undo: "/undo [n]: remove your last n messages and their replies (default 1)",
  retry: "run your last message again",
  queue: "/queue <text>: queue a message to run after the current one",
  compress:
    "/compress [focus]: summarise this session (keeping what the focus names, e.g. /compress the deployment details) and continue in a fresh one that starts from the summary and the latest messages",
  status: "session id, title, message count, tokens, queue depth and this platform's home channel",
  sethome: "make this chat the home channel of this platform (where /handoff from the terminal lands; admins only)",
  pair: "/pair approve <code>: let the person who got this pairing code talk to the agent (admins only)",
  help: "list the commands",
});

/** Parses `/name args` (also `/name@botname`); `null` when the text is not a command. */
export function parseSlashCommand(text: string): SlashCommand | null {
  const match = /^\/([A-Za-z][\w-]*)(?:@\S+)?(?:\s+([\s\S]*))?$/u.exec(text.trim());
  if (match === null) return null;
  return { name: match[1]!.toLowerCase(), args: (match[2] ?? "").trim() };
}

/**
 * Whether a parsed command is one for the gateway: a known command, or an unknown
 * `/word` on its own (answered with "Unknown command" and the list). An unknown
 * `/word` followed by more text (`/etc is full`) is a message for the model.
 */
export function isGatewayCommand(command: SlashCommand): boolean {
  return Object.hasOwn(SLASH_COMMANDS, command.name) || command.args === "";
}

/** What `/sethome` does in the terminal's help: nothing there; it is sent from a chat platform. */
export const SETHOME_IN_TERMINAL_HELP = "not here: send it in the chat platform's chat where handoffs should arrive (it becomes that platform's home channel)";

/** What `/pair` does in the terminal's help: nothing there; codes are approved with the CLI. */
export const PAIR_IN_TERMINAL_HELP = "not here: approve a pairing code with `threadline pairing approve <platform> <code>`";

/** The command list; the terminal's (`cli`) says where `/sethome` goes instead of offering it. */
function helpText(platform: string): string {
  return [
    "Commands:",
    ...Object.entries(SLASH_COMMANDS).map(([name, help]) => `/${name} — ${platform === TERMINAL_PLATFORM ? (TERMINAL_HELP[name] ?? help) : help}`),
  ].join("\n");
}

function formatTokens(n: number): string {
  return n.toLocaleString("en-US");
}

/** How a command answers: `refused` is an error caused by the user's input (sent as kind `error`, marked `refused`). */
type ReplyKind = OutboundMessage["kind"] | "refused";

/**
 * Runs a command; replies go to the chat of the message. A command the user got wrong
 * (unknown name, bad argument, a title in use, no such session) answers with an `error`
 * marked `refused`; only a failure of the command itself is a plain `error`. No reply names
 * a session of another chat (see {@link chatSafeErrorText}).
 */
export async function runSlashCommand(host: CommandHost, key: string, message: InboundMessage, command: SlashCommand): Promise<void> {
  const source = message.source;
  const ids = message.messageId ? [message.messageId] : [];
  const reply = (text: string, kind: ReplyKind = "notice"): Promise<void> =>
    kind === "refused" ? host.notify(source, text, ids, "error", { refused: true }) : host.notify(source, text, ids, kind);
  const { store, db } = host;
  try {
    switch (command.name) {
      case "new":
      case "reset": {
        // Any worker of the key stops, also one between two turns that is claiming the next
        // queued message (it would otherwise run that message after the queue was cleared).
        await host.interrupt(key, "stop");
        const existing = await store.getEntry(key);
        const entry = existing === null ? await store.getOrCreateSession(source, { forceNew: true }) : await store.resetSession(key);
        await host.queue.clear(key);
        await reply(`Started a new session (${entry?.sessionId ?? "new"}). The previous one is kept; /resume brings it back.`);
        return;
      }
      case "stop": {
        const stopped = await host.interrupt(key, "stop");
        await host.queue.clear(key);
        const suspended = await store.suspendSession(key);
        await reply(
          stopped
            ? "Stopped. Your next message starts a new session."
            : suspended
              ? "Nothing was running. Your next message starts a new session."
              : "Nothing was running.",
        );
        return;
      }
      case "status": {
        const entry = await store.getEntry(key);
        if (entry === null) {
          await reply("No session yet: send a message to start one.");
          return;
        }
        const depth = await host.queue.depth(key);
        await reply(
          [
            `Session: ${entry.sessionId}`,
            `Title: ${entry.title ?? "(untitled)"}`,
            `Messages: ${entry.messageCount}`,
            `Tokens: ${formatTokens(entry.totalTokens)} (in ${formatTokens(entry.usage.inputTokens)}, out ${formatTokens(entry.usage.outputTokens)})`,
            `Queue: ${depth} waiting${host.isBusy(key) ? ", a reply is running" : ""}`,
            await homeLine(host, source),
          ].join("\n"),
        );
        return;
      }
      case "title": {
        const entry = await store.getOrCreateSession(source);
        if (command.args === "") {
          const title = await db.getTitle(entry.sessionId);
          await reply(title === null ? "This session has no title. Set one with /title <text>." : `Title: ${title}`);
          return;
        }
        try {
          const set = await db.setTitle(entry.sessionId, command.args);
          await reply(`Title set: ${set}`);
        } catch (error) {
          // A title held by another chat's session is refused without naming that session.
          if (error instanceof ConflictError) await reply(await titleInUseText(db, key, command.args, error), "refused");
          else if (error instanceof InvalidInputError) await reply(error.message, "refused");
          else throw error;
        }
        return;
      }
      case "undo": {
        const n = command.args === "" ? 1 : Number(command.args);
        if (!Number.isSafeInteger(n) || n < 1) {
          await reply("Usage: /undo [n], where n is how many of your messages to remove (a whole number ≥ 1).", "refused");
          return;
        }
        if (host.isBusy(key)) {
          await reply("A reply is still running; /stop it first or wait for it.", "refused");
          return;
        }
        const entry = await store.getEntry(key);
        if (entry === null) {
          await reply("Nothing to undo.");
          return;
        }
        const result = await store.rewindSession(entry.sessionId, n);
        await reply(
          result.turnsUndone === 0
            ? "Nothing to undo."
            : // Never the removed text: in a shared chat it would show it to everyone again.
              result.turnsUndone === 1
              ? "Removed 1 message of yours and its reply."
              : `Removed ${result.turnsUndone} messages of yours and their replies.`,
        );
        return;
      }
      case "retry": {
        if (host.isBusy(key)) {
          await reply("A reply is still running; /stop it first or wait for it.", "refused");
          return;
        }
        const entry = await store.getEntry(key);
        const result = entry === null ? null : await store.rewindSession(entry.sessionId, 1);
        if (result === null || result.turnsUndone === 0 || result.targetText === null) {
          await reply("Nothing to retry: send a message first.");
          return;
        }
        await host.runMessage(key, { source, text: result.targetText, messageId: message.messageId ?? null });
        return;
      }
      case "queue": {
        if (command.args === "") {
          await reply("Usage: /queue <text>", "refused");
          return;
        }
        await host.enqueue(key, { source, text: command.args, messageId: message.messageId ?? null });
        return;
      }
      case "resume":
        await resumeCommand(host, key, source, command.args, reply, await isAdmin(host, source));
        return;
      case "compress":
        await compressCommand(host, key, source, command.args, reply);
        return;
      case "sethome": {
        if (!(await isAdmin(host, source))) {
          await reply(
            `Only an admin may set the home channel. Nothing was changed. (Admins are listed in adapters.${source.platform}.admins or gateway.admins.${source.platform}.)`,
            "refused",
          );
          return;
        }
        if (host.configuredHomeChannels !== undefined && Object.hasOwn(host.configuredHomeChannels, source.platform)) {
          await reply(
            `The ${source.platform} home channel is set in the config file (homeChannels.${source.platform}), and that wins; change it there. Nothing was changed.`,
            "refused",
          );
          return;
        }
        if (!source.chatId) {
          await reply("This chat has no id to send to, so it cannot be the home channel.", "error");
          return;
        }
        const threads = typeof source.threadId === "string" && source.threadId !== "";
        // What a handoff needs to key the chat as its next real message will be keyed: the kind of
        // chat (a thread's parent chat is a group) and who set it (their lane, in a chat with a
        // session per person).
        const sender = source.userIdAlt || source.userId || null;
        await setHomeChannel(db, source.platform, {
          chatId: source.chatId,
          name: source.chatName ?? null,
          threadsSupported: threads,
          chatType: source.chatType === "thread" ? "group" : source.chatType,
          ...(sender === null ? {} : { userId: sender }),
        });
        await reply(
          `This chat is now the ${source.platform} home channel` +
            (threads ? ": a /handoff from the terminal opens a new thread here." : ": a /handoff from the terminal continues here."),
        );
        return;
      }
      case "pair":
        await pairCommand(host, source, command.args, reply);
        return;
      case "help":
        await reply(helpText(source.platform));
        return;
      default:
        await reply(`Unknown command /${command.name}.\n${helpText(source.platform)}`, "refused");
    }
  } catch (error) {
    // A model provider's error (e.g. /compress summarising) is told by ref; the log has the detail.
    if (error instanceof ThreadlineError && error.code === "TL_ERR_AGENT" && !OPERATOR_PLATFORMS.includes(source.platform)) {
      const ref = failureRef();
      host.logFailure?.(ref, error, key);
      await reply(`/${command.name} failed: ${modelFailureText(source.platform, ref, error)}`, "error");
      return;
    }
    await reply(`/${command.name} failed: ${await chatSafeErrorText(db, key, error).catch(() => "an unexpected error")}`, "error");
  }
}

/** The platform of the terminal chat (`threadline chat`), whose handoffs go to the other platforms' home channels. */
const TERMINAL_PLATFORM = "cli";

/** Commands that mean something else in the terminal, as its `/help` describes them. */
const TERMINAL_HELP: Readonly<Record<string, string>> = Object.freeze({ sethome: SETHOME_IN_TERMINAL_HELP, pair: PAIR_IN_TERMINAL_HELP });

/**
 * The `/status` line naming the platform's home channel (or how to set one); in the terminal,
 * every platform's (it has none of its own: `/sethome` is sent from a chat platform).
 */
async function homeLine(host: CommandHost, source: SessionSource): Promise<string> {
  const homes = await effectiveHomeChannels(host.db, host.configuredHomeChannels ?? {});
  if (source.platform === TERMINAL_PLATFORM) {
    const set = Object.entries(homes).map(([platform, home]) => `${platform} ${home.name ?? home.chatId}`);
    return set.length === 0
      ? "Home channels: none; send /sethome in the chat platform's chat where handoffs should arrive"
      : `Home channels: ${set.join(", ")}`;
  }
  const home = Object.hasOwn(homes, source.platform) ? homes[source.platform] : undefined;
  if (home === undefined) return `Home channel (${source.platform}): none; send /sethome in the chat that should be it`;
  const here = home.chatId === source.chatId ? " (this chat)" : "";
  return `Home channel (${source.platform}): ${home.name ?? home.chatId}${here}`;
}

async function resumeCommand(
  host: CommandHost,
  key: string,
  source: SessionSource,
  args: string,
  reply: (text: string, kind?: ReplyKind) => Promise<void>,
  admin: boolean,
): Promise<void> {
  const { store, db } = host;
  if (args === "") {
    const recent = (await db.listSessions({ sessionKey: key, orderBy: "started", includeChildren: true, limit: 10 })).items;
    const current = (await store.getEntry(key))?.sessionId;
    if (recent.length === 0) {
      await reply("No earlier sessions in this chat.");
      return;
    }
    const lines = recent.map((s) => {
      const label = s.title ?? s.preview ?? "(empty)";
      return `${s.id === current ? "→" : "•"} ${label} — ${s.id}`;
    });
    await reply(["Recent sessions in this chat (use /resume <title or id>):", ...lines].join("\n"));
    return;
  }
  // Only this chat's sessions: a title or an id prefix of another chat's session is not found.
  const mine = (await db.listSessions({ sessionKey: key, orderBy: "started", includeChildren: true, limit: 1000 })).items;
  const byTitle = mine.filter((s) => s.title === args);
  const byId = mine.filter((s) => s.id === args || s.id.startsWith(args));
  const matches = byTitle.length > 0 ? byTitle : byId;
  // A session handed off to this chat from the terminal is the terminal's: it was not started in
  // this chat, so only an admin may take it back here. Other chats' sessions are never found.
  const handedOff = matches.length === 0 && (await handedOffTo(db, key, args));
  if (handedOff && !admin) {
    await reply("That session was not started in this chat (it was handed off from the terminal): only an admin may resume it here.", "refused");
    return;
  }
  if (matches.length !== 1 && !handedOff) {
    await reply(
      matches.length === 0
        ? `No session of this chat is titled "${args}" or has an id starting "${args}". Send /resume to list them.`
        : `"${args}" matches ${matches.length} sessions of this chat; give more of the id:\n${matches
            .slice(0, 5)
            .map((s) => `• ${s.title ?? s.preview ?? "(empty)"} — ${s.id}`)
            .join("\n")}`,
      "refused",
    );
    return;
  }
  const target = handedOff ? args : matches[0]!.id;
  if (host.isBusy(key)) await host.interrupt(key, "stop");
  let entry = await store.getEntry(key);
  if (entry === null) entry = await store.getOrCreateSession(source);
  const switched = await store.switchSession(key, target);
  const session = await db.getSession(target);
  await reply(`Resumed ${session?.title ?? target} (${switched?.messageCount ?? session?.messageCount ?? 0} messages).`);
  await host.resumeQueue(key, source);
}

/** Whether the sender is an admin (a host without admins treats everyone as one). */
async function isAdmin(host: CommandHost, source: SessionSource): Promise<boolean> {
  return host.isAdmin === undefined ? true : host.isAdmin(source);
}

/**
 * `/pair approve <code>`: an admin approves a pairing code of this platform from the chat
 * (recorded as approved by `<platform>:<their user id>`). The code is never echoed into a log.
 */
async function pairCommand(host: CommandHost, source: SessionSource, args: string, reply: (text: string, kind?: ReplyKind) => Promise<void>): Promise<void> {
  if (source.platform === TERMINAL_PLATFORM) {
    await reply("In the terminal, approve a pairing code with `threadline pairing approve <platform> <code>`.", "refused");
    return;
  }
  const match = /^approve\s+(\S[\s\S]*)$/iu.exec(args);
  if (match === null) {
    await reply("Usage: /pair approve <code> (the 8-character code the new person got from the bot).", "refused");
    return;
  }
  if (!(await isAdmin(host, source))) {
    await reply(
      `Only an admin may approve pairing codes. (Admins are listed in adapters.${source.platform}.admins or gateway.admins.${source.platform}.)`,
      "refused",
    );
    return;
  }
  const pairing = host.pairing ?? null;
  if (pairing === null) {
    await reply(`Pairing is not used on ${source.platform} (adapters.${source.platform}.access is not pairing), so there is no code to approve.`, "refused");
    return;
  }
  const admin = source.userIdAlt || source.userId || "unknown";
  const outcome = await pairing.approvePairingCode(source.platform, match[1]!.trim(), { by: `${source.platform}:${admin}` });
  switch (outcome.kind) {
    case "approved": {
      const who = outcome.approval.userName ?? outcome.approval.userId;
      await reply(`Approved: ${who} may now talk to the agent on ${source.platform}.`);
      return;
    }
    case "unknown-code":
      await reply("No pending code matches that. Check it (codes expire after 1 hour), or ask the person to message the bot again for a new one.", "refused");
      return;
    case "locked-out":
      await reply(
        `Too many wrong codes: approving on ${source.platform} is locked until ${new Date(outcome.until).toISOString()}. \`threadline pairing list\` shows the pending codes.`,
        "refused",
      );
      return;
  }
}

/**
 * Whether the session with exactly this id was handed off to the chat of `key` (a handoff
 * from the terminal bound the key to it): such a session belongs to the terminal's key, yet
 * `/resume <id>` in that chat takes it back. Its transcript names the handoffs
 * (`handoff:<id>` on their summary messages), whose records name the key.
 */
async function handedOffTo(db: SessionHistory & HandoffStore, key: string, sessionId: string): Promise<boolean> {
  if (!SESSION_ID_PATTERN.test(sessionId) || (await db.getSession(sessionId)) === null) return false;
  for (const message of await db.getMessages(sessionId)) {
    const mark = message.role === "user" ? message.platformMessageId : null;
    if (typeof mark !== "string" || !mark.startsWith(HANDOFF_MESSAGE_PREFIX)) continue;
    const handoff = await db.getHandoff(mark.slice(HANDOFF_MESSAGE_PREFIX.length));
    if (handoff?.status === "completed" && handoff.sessionId === sessionId && handoff.sessionKey === key) return true;
  }
  return false;
}

/** How long `/compress` waits for a reply that is still being delivered before refusing (ms). */
const COMPRESS_WAIT_MS = 5000;

async function compressCommand(
  host: CommandHost,
  key: string,
  source: SessionSource,
  focus: string,
  reply: (text: string, kind?: ReplyKind) => Promise<void>,
): Promise<void> {
  const { store } = host;
  // A reply that is being delivered (the chat may already show it) is waited for, briefly.
  for (let waited = 0; host.isBusy(key) && waited < COMPRESS_WAIT_MS; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  if (host.isBusy(key)) {
    await reply("A reply is still running; wait for it before /compress.", "refused");
    return;
  }
  const entry = await store.getEntry(key);
  if (entry === null || entry.messageCount === 0) {
    await reply("Nothing to compress yet.");
    return;
  }
  const outcome = await host.compress(key, source, focus.trim() === "" ? null : focus);
  if (outcome.status === "busy") {
    await reply("This session is already being compressed; wait a moment and look at /status.", "refused");
    return;
  }
  if (outcome.status === "nothing") {
    await reply("Nothing to compress yet.");
    return;
  }
  const title = outcome.title;
  await reply(`Compressed into a new session${title ? ` "${title}"` : ""} (${outcome.entry.sessionId}) that starts from the summary.`);
}
