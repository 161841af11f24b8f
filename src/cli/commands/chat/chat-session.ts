/**
 * `threadline chat`: an interactive conversation in the terminal, through the same session
 * machinery as the gateway (a {@link GatewayRunner} with a {@link SessionRouter} on the
 * database, source `cli`, the configured agent, the gateway's slash commands) plus
 * `/handoff <platform>` and `/exit`.
 *
 * Lanes: every chat runs under the session key `agent:main:cli:dm:<lane>`. A new chat's
 * lane is named after the id its session gets (`YYYYMMDD_HHMMSS_<6 hex>`, created with the
 * first thing typed). Resuming (`--continue`, `--resume`, `sessions browse`) rejoins the
 * lane the session was created in (a session from elsewhere gets the lane named after its
 * id) and points it at that session, so the session keeps its id.
 *
 * @module
 */
import { createInterface, type Interface } from "node:readline";
import type { AddHelpTextContext } from "commander";
import { CLI_PLATFORM, CliAdapter, type CliDelivery } from "../../../adapters/internal.js";
import {
  defaultConfigPath,
  newRouteFields,
  GatewayRunner,
  HandoffError,
  parseSlashCommand,
  readConfigFile,
  requestHandoff,
  SLASH_COMMANDS,
  SessionRouter,
  type OutboundDelta,
  SETHOME_IN_TERMINAL_HELP,
  PAIR_IN_TERMINAL_HELP,
} from "../../../gateway/internal.js";
import { chooseAgent, homeChannelPlatforms, parseServeConfig, unknownHomePlatform, type ServeConfig } from "../../../serve/internal.js";
import { defaultDatabasePath, newSessionId, NotFoundError, openSessionDB, type SessionHistory } from "../../../store/index.js";
import { CliError, EXIT, missingDatabaseFile, noteOnStderr, reportError, resolveSessionRef } from "../../cli-context.js";
import { styles, useColor, type CliIo } from "../../cli-output.js";
import { loadDisplayWidth } from "../../display-width.js";
import { buildRecap, recapOneLiner, renderRecapPanel } from "../../recap.js";
import { END_REASON_ABANDONED, END_REASON_USER_EXIT, endAbandonedTerminalSessions } from "../../terminal-session-end.js";

/** Options of {@link runChat} (those of the command line). */
export interface ChatOptions {
  /** Database target (`--db`; else THREADLINE_DB, the config file's `database`, the default file). */
  db?: string;
  /** Config file (`--config`; else THREADLINE_CONFIG, else `$THREADLINE_HOME/config.yaml`). */
  config?: string;
  /** `--continue [title]`: `true` for the most recent CLI session, or a title (newest of its lineage). */
  continue?: string | boolean;
  /** `--resume <id|prefix|title>`. */
  resume?: string;
  /** Add `--db <target>` to the resume hint (the database was named on the command line). */
  showDbInHint?: boolean;
}

/** How long `/handoff` waits for a gateway (ms). */
export const HANDOFF_TIMEOUT_MS = 60_000;
/** The key prefix of terminal lanes. */
const CLI_KEY_PREFIX = "agent:main:cli:dm:";
/** The signals on which a chat stops its reply, ends its session and leaves (SIGHUP: its terminal closed). */
const LEAVING_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
/** How often the chat looks whether a turn has finished (ms). */
const TURN_POLL_MS = 20;
/** The answer to `/sethome` in the terminal: a home channel is a chat of a platform, set from there. */
const SETHOME_IN_TERMINAL =
  "/sethome works in a chat platform, not in the terminal: send it in the chat (Telegram, Discord, Slack, WhatsApp, Matrix or Signal) where handoffs from the terminal should arrive.";

const CLI_COMMANDS: Readonly<Record<string, string>> = Object.freeze({
  handoff: "/handoff <platform>: move this session to the platform's home channel (a running gateway takes it over)",
  exit: "leave the chat (also /quit or Ctrl-D); prints how to resume",
});

/** Slash commands of the gateway that mean something else in the terminal, as `chat --help` describes them. */
const TERMINAL_HELP: Readonly<Record<string, string>> = Object.freeze({
  sethome: SETHOME_IN_TERMINAL_HELP,
  pair: PAIR_IN_TERMINAL_HELP,
});

/** The config a chat runs with: the file, what it says (defaults when there is none), and the database target. */
export interface ChatSetup {
  configPath: string;
  config: ServeConfig;
  /** `--db`, else THREADLINE_DB, else the config file's `database`, else `undefined` (the default file). */
  database: string | undefined;
}

/**
 * Reads the config file (`--config`, else THREADLINE_CONFIG, else the default path; a
 * missing default file is fine) and picks the database as `threadline serve` does, so a
 * chat and the gateway it hands off to share one database.
 */
export async function loadChatSetup(io: CliIo, options: Pick<ChatOptions, "db" | "config">): Promise<ChatSetup> {
  const explicit = options.config ?? io.env["THREADLINE_CONFIG"];
  const configPath = explicit ?? defaultConfigPath(io.env);
  let doc: Record<string, unknown> = {};
  try {
    doc = await readConfigFile(configPath);
  } catch (error) {
    if (!(error instanceof NotFoundError) || explicit !== undefined) throw error;
  }
  const config = parseServeConfig(doc, { env: io.env });
  return { configPath, config, database: options.db ?? io.env["THREADLINE_DB"] ?? config.database ?? undefined };
}

/** `--continue` with no terminal session to continue. */
function nothingToContinue(): CliError {
  return new CliError("TL_ERR_NOT_FOUND", 'No terminal chat session to continue yet. Start one with "threadline chat".');
}

/**
 * `--continue`/`--resume` on a SQLite file that does not exist: there is nothing to resume,
 * so the chat says so (exit 3, as for a database without such a session) before opening the
 * database, and creates nothing (no file, no directories). A file the user named (`named`:
 * `--db`, THREADLINE_DB, the config file's `database`) is named in the message, since it may
 * be a typo.
 */
async function refuseResumeWithoutDatabase(target: string, named: boolean, options: ChatOptions): Promise<void> {
  const resuming = options.resume !== undefined || (options.continue !== undefined && options.continue !== false);
  if (!resuming) return;
  const missing = await missingDatabaseFile(target);
  if (missing === null) return;
  const where = named ? ` There is no database at ${missing} yet; if that path is wrong, check --db, THREADLINE_DB or the config file's database.` : "";
  const ref = options.resume ?? options.continue;
  if (typeof ref === "string") {
    throw new NotFoundError(`No session with the id, id prefix or title "${ref}".${where || ' Run "threadline sessions list" to see them.'}`);
  }
  throw new CliError("TL_ERR_NOT_FOUND", `${nothingToContinue().message}${where}`);
}

/**
 * The session a `--continue`/`--resume` names: the exact id, title or id prefix (never another
 * session of its lineage by title text), then, when that session was compressed, the live tip
 * of its compression chain (following parent links), saying so on stderr.
 */
async function resumeTarget(db: SessionHistory, options: ChatOptions, note: (line: string) => void): Promise<string | null> {
  let id: string;
  if (options.resume !== undefined) {
    id = await resolveSessionRef(db, options.resume, { note });
  } else if (typeof options.continue === "string") {
    id = await resolveSessionRef(db, options.continue, { note });
  } else if (options.continue === true) {
    const latest = (await db.listSessions({ sources: [CLI_PLATFORM], limit: 1 })).items[0];
    if (latest === undefined) throw nothingToContinue();
    id = latest.id;
  } else {
    return null;
  }
  const session = await db.getSession(id);
  if (session !== null && session.endReason === "compression") {
    const tip = await db.getCompressionTip(id);
    if (tip !== id) {
      const tipTitle = (await db.getSession(tip))?.title;
      note(
        `${session.title ? `"${session.title}"` : id} was compressed into ${tipTitle ? `"${tipTitle}" ` : ""}(${tip}); continuing there, the newest session of its chain.`,
      );
    }
    return tip;
  }
  return id;
}

/** The lane (chat id) a resumed session runs in: the CLI lane it was created in, else one named after it. */
function laneOf(session: { id: string; sessionKey: string | null }): string {
  const key = session.sessionKey;
  if (key?.startsWith(CLI_KEY_PREFIX)) {
    const lane = key.slice(CLI_KEY_PREFIX.length);
    if (/^[\w-]+$/u.test(lane)) return lane;
  }
  return session.id;
}

/**
 * Points a lane at a session: a new lane's entry is written (creating the session when
 * `create` is set, reopening it when it had ended); an existing entry is switched like
 * `/resume` does (unless it already routes to that live session).
 */
async function bindLane(store: SessionRouter, key: string, source: CliAdapter["source"], sessionId: string, create: boolean): Promise<void> {
  const db = store.db;
  for (let attempt = 0; attempt < 8; attempt++) {
    const route = await db.getRoute(key);
    if (route === null) {
      const now = store.clock.now();
      const session = create ? null : await db.getSession(sessionId);
      const written = await db.writeRoute({
        key,
        expectedVersion: null,
        route: newRouteFields(sessionId, now, source),
        ...(create
          ? {
              createSession: {
                id: sessionId,
                source: CLI_PLATFORM,
                userId: source.userId ?? null,
                sessionKey: key,
                chatId: source.chatId ?? null,
                chatType: "dm",
                startedAt: now,
              },
            }
          : session !== null && session.endedAt !== null
            ? { reopenSession: sessionId }
            : {}),
      });
      if (written !== null) return;
      continue;
    }
    if (create) return;
    const session = await db.getSession(route.sessionId);
    if (route.sessionId === sessionId && !route.suspended && session !== null && session.endedAt === null) {
      // Already bound: count the resume as activity (so an idle reset policy does not replace it on
      // the next message), and drop a turn marker a terminal that died mid-turn left behind.
      const now = store.clock.now();
      await store.patchEntry(key, () => ({ updatedAt: now, turnStartedAt: null }));
      return;
    }
    await store.switchSession(key, sessionId);
    return;
  }
}

/**
 * Before a line goes to the gateway: when the lane's session was ended by a chat leaving
 * (another terminal on the same session exited) or as abandoned, points the lane back at it,
 * reopened, instead of letting the gateway start a new session. Other ends (`/new`, a reset,
 * a compression) already moved the lane on and are left alone.
 */
async function rejoinIfLeft(store: SessionRouter, key: string): Promise<void> {
  const route = await store.db.getRoute(key);
  if (route === null) return;
  const session = await store.db.getSession(route.sessionId);
  if (session === null || session.endedAt === null) return;
  if (session.endReason === END_REASON_USER_EXIT || session.endReason === END_REASON_ABANDONED) await store.switchSession(key, session.id);
}

/** Waits `ms` milliseconds. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs an interactive chat on `io` until `/exit`, `/quit`, Ctrl-D (end of input) or
 * Ctrl-C at an empty prompt; returns the exit code. Prints the session id and how to
 * resume it on the way out.
 */
export async function runChat(io: CliIo, options: ChatOptions = {}): Promise<number> {
  await loadDisplayWidth();
  if (options.resume !== undefined && options.continue !== undefined && options.continue !== false) {
    throw new CliError("TL_ERR_USAGE", "Use either --continue or --resume, not both.");
  }
  const s = styles(useColor(io));
  const { configPath, config, database } = await loadChatSetup(io, options);
  // A blank target (an empty THREADLINE_DB) counts as none: the default file.
  const named = database !== undefined && database.trim() !== "";
  const target = named ? database : defaultDatabasePath(io.env);
  await refuseResumeWithoutDatabase(target, named, options);
  const db = await openSessionDB(target, { synchronous: config.storage.synchronous });
  const agent = chooseAgent(config, io.env, db);
  if (config.autoPrune.enabled) {
    // At most once per interval across every process sharing the database; never fatal.
    await db
      .autoPrune({ olderThanDays: config.autoPrune.retentionDays, intervalSeconds: config.autoPrune.minIntervalHours * 3600, vacuum: config.autoPrune.vacuum })
      .catch(() => {});
  }
  // Sessions of chats that were killed, idle for a day, count as ended (the next auto-prune can
  // remove them). In the background: a long history takes a moment to read, and the chat need not
  // wait for it; a resume does (it may name one of them). Never fatal.
  const sweep = endAbandonedTerminalSessions(db, io.now()).catch(() => 0);
  let runner: GatewayRunner | null = null;
  let rl: Interface | null = null;
  const cleanups: Array<() => void> = [];
  try {
    const resumeId = await resumeTarget(db, options, noteOnStderr(io));
    if (resumeId !== null) await sweep;
    const resumed = resumeId === null ? null : await db.getSession(resumeId);
    const lane = resumed === null ? newSessionId(Date.now() / 1000, 6) : laneOf(resumed);
    const lifecycle = config.lifecycle;
    const store = new SessionRouter({
      db,
      keySettings: lifecycle.keySettings,
      reset: lifecycle.reset,
      resumeFreshnessSeconds: lifecycle.resumeFreshnessSeconds,
      sessionIdHexDigits: 6,
    });
    const print = (text: string): void => {
      io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    };
    // Replies stream: each piece is printed as the model produces it; the whole reply then only ends the line.
    const streamed = new Set<string>();
    let midReply = false;
    const showDelta = (delta: OutboundDelta): void => {
      for (const id of delta.inReplyTo) streamed.add(id);
      midReply = true;
      io.stdout.write(delta.text);
    };
    const show = (delivery: CliDelivery): void => {
      const { text, kind, inReplyTo } = delivery.message;
      const wasStreamed = inReplyTo.some((id) => streamed.has(id));
      for (const id of inReplyTo) streamed.delete(id);
      if (kind === "reply") {
        io.stdout.write(wasStreamed ? "\n\n" : `${text}\n\n`);
        midReply = false;
        return;
      }
      if (midReply) io.stdout.write("\n");
      midReply = false;
      if (kind === "error") print(s.red(text));
      else print(s.dim(text));
    };
    const cli = new CliAdapter({ chatId: lane, onDelivery: show, onDelta: showDelta });
    const key = await store.sessionKeyFor(cli.source);
    runner = new GatewayRunner({
      store,
      agentFactory: agent.factory,
      adapters: [cli],
      titler: agent.titler,
      contextWindow: agent.contextWindow,
      ...(config.gateway.historyLimit === undefined ? {} : { historyLimit: config.gateway.historyLimit }),
      contextConfig: {
        connectedPlatforms: [CLI_PLATFORM],
        homeChannels: Object.fromEntries(
          Object.entries(config.homeChannels).map(([platform, c]) => [platform, c.name === null ? { chatId: c.chatId } : { chatId: c.chatId, name: c.name }]),
        ),
      },
      redactPii: lifecycle.redactPii,
      compression: { settings: config.compression, beforeResetTimeoutSeconds: config.gateway.beforeResetTimeoutSeconds },
      ...(agent.memoryFor === null ? {} : { memoryFor: agent.memoryFor }),
    });
    const gateway = runner;
    await gateway.start();

    const showRecap = async (sessionId: string): Promise<void> => {
      const session = await db.getSession(sessionId);
      if (session === null) return;
      const info = { id: session.id, title: session.title, messageCount: session.messageCount, lastActiveAt: session.lastActiveAt };
      if (config.display.resumeDisplay === "minimal") {
        print(recapOneLiner(info, io.now()));
        return;
      }
      const recap = buildRecap(await db.getMessages(session.id));
      io.stdout.write(renderRecapPanel(recap, info, { width: io.stdout.columns ?? 80, color: useColor(io), now: io.now() }));
      print(`Resumed session ${session.id}.`);
    };

    print(
      `${s.bold("threadline chat")} ${s.dim(`· ${agent.describe}`)}\n` +
        s.dim("Type a message and press Enter. /help lists the commands; /exit or Ctrl-D leaves."),
    );
    let bound = false;
    if (resumed !== null) {
      await bindLane(store, key, cli.source, resumed.id, false);
      bound = true;
      await showRecap(resumed.id);
    }
    const bind = async (): Promise<void> => {
      if (bound) return;
      await bindLane(store, key, cli.source, lane, true);
      bound = true;
    };
    const currentSessionId = async (): Promise<string | null> => (await store.getEntry(key))?.sessionId ?? null;

    const terminal = io.stdin.isTTY === true && io.stdout.isTTY === true;
    const input = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal,
      prompt: terminal ? s.bold(s.cyan("> ")) : "",
      historySize: terminal ? 500 : 0,
    });
    rl = input;
    const lines: string[] = [];
    let closed = false;
    let busy = false;
    let finished = false;
    let wake: (() => void) | null = null;
    const poke = (): void => {
      const w = wake;
      wake = null;
      w?.();
    };
    input.on("line", (line) => {
      lines.push(line);
      poke();
    });
    input.on("close", () => {
      closed = true;
      poke();
    });
    /** Ctrl-C: stops a running reply, else clears the line, else leaves. A signal (`leave`) stops the reply and leaves. */
    const interruptOrLeave = (leave = false): void => {
      if (busy) {
        void gateway.interrupt(key, "stop");
        if (leave) finished = true;
        return;
      }
      if (!leave && input.line !== "") {
        // Ctrl-C with text on the line clears it: all of it, wherever the cursor is (text typed
        // while a reply was finishing is redrawn with the cursor at its start).
        input.write(null, { ctrl: true, name: "e" });
        input.write(null, { ctrl: true, name: "u" });
        return;
      }
      finished = true;
      if (terminal) io.stdout.write("\n");
      poke();
    };
    input.on("SIGINT", () => interruptOrLeave());
    const onSignal = (): void => interruptOrLeave(true);
    for (const signal of LEAVING_SIGNALS) io.signals.on(signal, onSignal);
    cleanups.push(() => {
      for (const signal of LEAVING_SIGNALS) io.signals.off(signal, onSignal);
    });

    const waitForTurn = async (): Promise<void> => {
      while (gateway.isBusy(key)) await delay(TURN_POLL_MS);
    };

    let handedOff: string | null = null;
    const handoff = async (platform: string): Promise<boolean> => {
      if (platform === "") {
        const known = Object.keys(config.homeChannels);
        print(s.red(`Usage: /handoff <platform>, e.g. /handoff telegram${known.length > 0 ? ` (home channels: ${known.join(", ")})` : ""}.`));
        return false;
      }
      const unknown = unknownHomePlatform(platform);
      if (unknown !== null) {
        print(s.red(`${unknown.charAt(0).toUpperCase()}${unknown.slice(1)} Handoffs go to one of: ${homeChannelPlatforms().join(", ")}.`));
        return false;
      }
      const entry = await store.getEntry(key);
      if (entry === null || entry.messageCount === 0) {
        print(s.red("Nothing to hand off yet: send a message first."));
        return false;
      }
      const turnRunning = gateway.isBusy(key) || entry.turnStartedAt !== null;
      if (!turnRunning && Object.hasOwn(config.homeChannels, platform)) {
        print(
          s.dim(
            `Handing session ${entry.sessionId} off to ${platform}: waiting for a running gateway (threadline serve) to take it (up to ${HANDOFF_TIMEOUT_MS / 1000} s)…`,
          ),
        );
      }
      try {
        const outcome = await requestHandoff(
          db,
          { sessionId: entry.sessionId, platform },
          { homeChannels: config.homeChannels, turnRunning, timeoutMs: HANDOFF_TIMEOUT_MS, configPath },
        );
        const where = `chat ${outcome.chatId}${outcome.threadId === null ? "" : `, thread ${outcome.threadId}`}`;
        print(s.green(`Handed off to ${platform} (${where}): the session continues there with the same id.`));
        handedOff = platform;
        return true;
      } catch (error) {
        print(s.red(error instanceof HandoffError ? error.message : `/handoff failed: ${(error as Error).message}`));
        return false;
      }
    };

    /** Runs one typed line; `true` when the chat should end. */
    const runLine = async (raw: string): Promise<boolean> => {
      const text = raw.trim();
      if (text === "") return false;
      const command = parseSlashCommand(text);
      if (command !== null && (command.name === "exit" || command.name === "quit")) return true;
      // Another terminal on this session left (or the session sat idle for a day): take it back.
      if (bound) await rejoinIfLeft(store, key);
      if (command !== null && command.name === "handoff") return handoff(command.args);
      if (command !== null && command.name === "sethome") {
        print(s.red(SETHOME_IN_TERMINAL));
        return false;
      }
      // The lane's session is created with the first thing that needs one (not by /status, /help, /stop,
      // and /new makes its own).
      if (command === null || !["status", "help", "stop", "new", "reset"].includes(command.name)) await bind();
      const before = await currentSessionId();
      const delivered = cli.sent.length;
      const { ack } = await cli.submit(text);
      if (ack.status === "rejected" && cli.sent.length === delivered) print(s.red(ack.reason));
      await waitForTurn();
      if (command !== null && command.name === "help") {
        print(
          slashCommandRows(CLI_COMMANDS)
            .map(([usage, help]) => `${usage} — ${help}`)
            .join("\n"),
        );
      }
      if (command !== null && command.name === "resume" && command.args !== "") {
        const after = await currentSessionId();
        if (after !== null && after !== before) await showRecap(after);
      }
      return false;
    };

    if (terminal) input.prompt();
    for (;;) {
      if (finished) break;
      const line = lines.shift();
      if (line === undefined) {
        if (closed) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      busy = true;
      let leave: boolean;
      try {
        leave = await runLine(line);
      } catch (error) {
        reportError(io, error);
        leave = false;
      } finally {
        busy = false;
      }
      if (leave) break;
      if (terminal && !closed && lines.length === 0) input.prompt();
    }

    if (terminal && closed && !finished) io.stdout.write("\n");
    if (gateway.isBusy(key)) await gateway.interrupt(key, "stop");
    const entry = await store.getEntry(key);
    const sessionId = entry?.sessionId ?? null;
    // The session ends with the chat (as hermes ends a CLI session on exit), so retention can remove
    // it; -c/-r reopen it. A session handed off goes on elsewhere and stays live.
    if (sessionId !== null && handedOff === null) {
      await gateway.drain(5_000);
      await db.endSession(sessionId, END_REASON_USER_EXIT).catch((error: unknown) => {
        io.stderr.write(
          `threadline: could not mark session ${sessionId} as ended (${(error as Error).message}). Nothing was lost; the next "threadline chat" ends it once it has been idle for a day.\n`,
        );
      });
    }
    if (sessionId === null) {
      print(s.dim("No session was started."));
    } else {
      const title = entry?.title ? ` "${entry.title}"` : "";
      const dbHint = options.showDbInHint && options.db !== undefined ? ` --db ${JSON.stringify(options.db)}` : "";
      const command = `threadline chat --resume ${sessionId}${dbHint}`;
      print(
        handedOff === null
          ? `Session ${s.bold(sessionId)}${title}. Resume it with: ${command}`
          : `Session ${s.bold(sessionId)}${title} continues on ${handedOff}. Take it back to the terminal with: ${command}`,
      );
    }
    return EXIT.ok;
  } finally {
    for (const cleanup of cleanups) cleanup();
    rl?.close();
    if (runner !== null) {
      await runner.drain(5_000);
      await runner.stop();
    }
    await sweep;
    await db.close();
  }
}

/** The slash commands as help rows: usage (`/resume [title|id]`) and what it does, each once. */
function slashCommandRows(commands: Readonly<Record<string, string>>): Array<[string, string]> {
  return Object.entries(commands).map(([name, help]) => {
    // A help text may start with the usage, "/resume [title|id]: switch …".
    const match = new RegExp(`^/${name}((?: [^:]+)?): (.*)$`, "su").exec(help);
    return match === null ? [`/${name}`, help] : [`/${name}${match[1]!}`, match[2]!];
  });
}

/** The "In the chat:" section of `chat --help`, laid out (aligned, wrapped) like the options. */
export function slashCommandHelp(context: AddHelpTextContext): string {
  const helper = context.command.createHelp();
  const output = context.command.configureOutput();
  helper.prepareContext({ helpWidth: (context.error ? output.getErrHelpWidth?.() : output.getOutHelpWidth?.()) ?? 80 });
  const rows = slashCommandRows({ ...SLASH_COMMANDS, ...TERMINAL_HELP, ...CLI_COMMANDS });
  const width = Math.max(...rows.map(([usage]) => usage.length));
  return [
    "",
    ...helper.formatItemList(
      "In the chat:",
      rows.map(([usage, help]) => helper.formatItem(usage, width, help, helper)),
      helper,
    ),
    "Exit with /exit, /quit or Ctrl-D; the session id and the command to resume it are printed.",
  ].join("\n");
}
