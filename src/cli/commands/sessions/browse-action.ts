/**
 * The action of `threadline sessions browse` (defined in browse-command.ts): the sessions,
 * the picker (session-picker.ts), then the chosen session in `threadline chat`.
 *
 * @module
 */
import type { Command } from "commander";
import type { SessionSummary } from "../../../store/index.js";
import { openReadableDatabase } from "../../cli-context.js";
import type { CliIo } from "../../cli-output.js";
import { collectSessions } from "../../session-pages.js";
import { loadChatSetup, runChat } from "../chat/chat-session.js";
import { pickSession } from "./session-picker.js";

interface BrowseOptions {
  db?: string;
  config?: string;
  source?: string[];
  limit: number;
}

/** Runs `browse`: the action of makeBrowseCommand (in browse-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: BrowseOptions, command: Command): Promise<void> {
  const setup = await loadChatSetup(io, options);
  // A first run (the default database not created yet) has nothing to pick; creates nothing.
  const { db } = await openReadableDatabase(setup.database, io.env);
  let sessions: SessionSummary[];
  try {
    const sources = options.source !== undefined && options.source.length > 0 ? options.source : undefined;
    sessions = (await collectSessions(db, sources === undefined ? {} : { sources }, options.limit)).items;
  } finally {
    await db.close();
  }
  if (sessions.length === 0) {
    io.stdout.write('No sessions yet. Start one with "threadline chat".\n');
    return;
  }
  const id = await pickSession(io, sessions);
  if (id === null) return;
  const chat: Parameters<typeof runChat>[1] = { resume: id, showDbInHint: command.getOptionValueSource("db") === "cli" };
  if (options.db !== undefined) chat.db = options.db;
  if (options.config !== undefined) chat.config = options.config;
  io.exitCode = await runChat(io, chat);
}
