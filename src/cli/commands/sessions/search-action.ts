/**
 * `threadline sessions search <query> [--source S] [--role R] [--limit N]`: full-text search,
 * hits grouped by session.
 *
 * The action of the command defined in search-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { InvalidInputError, type MessageRole, type SearchHit, type Session } from "../../../store/index.js";
import { relativeTime, styles, truncate, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";

interface SearchCommandOptions {
  discover?: boolean;
  db?: string;
  json?: boolean;
  source?: string[];
  role?: MessageRole[];
  limit: number;
}

/** One session's hits in `sessions search --json`. */
export interface SearchGroupJson {
  sessionId: string;
  title: string | null;
  preview: string | null;
  source: string;
  model: string | null;
  startedAt: number;
  lastActiveAt: number | null;
  hits: Array<Pick<SearchHit, "messageId" | "role" | "snippet" | "timestamp" | "toolName" | "context">>;
}

/** Runs `search`: the action of makeSearchCommand (in search-command.ts), loaded when the command runs. */
export async function run(io: CliIo, words: string[], options: SearchCommandOptions): Promise<void> {
  const query = words.join(" ");
  if (options.discover) {
    // The agent's session_search tool (and the gateway's scope rules it uses) load only for --discover.
    const { formatSessionSearch, MAX_SESSION_SEARCH_LIMIT, sessionSearch } = await import("../../../tools/internal.js");
    await withExistingDatabase(options.db, io.env, async (db) => {
      const limit = Math.min(MAX_SESSION_SEARCH_LIMIT, options.limit === 20 ? 3 : options.limit);
      const result = await sessionSearch(db, query, {
        limit,
        ...(options.source !== undefined && options.source.length > 0 ? { sources: options.source } : {}),
      });
      if (options.json) writeJson(io, result);
      else io.stdout.write(`${formatSessionSearch(result)}\n`);
    });
    return;
  }
  if (query.trim() === "")
    throw new InvalidInputError("Give something to search for (or --discover with no query to list recent sessions).", { field: "query" });
  await withExistingDatabase(options.db, io.env, async (db) => {
    const hits = await db.searchMessages(query, {
      limit: options.limit,
      ...(options.source !== undefined && options.source.length > 0 ? { sources: options.source } : {}),
      ...(options.role !== undefined && options.role.length > 0 ? { roles: options.role } : {}),
    });
    const order: string[] = [];
    const bySession = new Map<string, SearchHit[]>();
    for (const hit of hits) {
      const list = bySession.get(hit.sessionId);
      if (list === undefined) {
        order.push(hit.sessionId);
        bySession.set(hit.sessionId, [hit]);
      } else list.push(hit);
    }
    const sessions = new Map<string, Session | null>();
    for (const id of order) sessions.set(id, await db.getSession(id));
    const groups: SearchGroupJson[] = order.map((id) => {
      const group = bySession.get(id)!;
      const first = group[0]!;
      const session = sessions.get(id) ?? null;
      return {
        sessionId: id,
        title: session?.title ?? null,
        preview: session?.preview ?? null,
        source: first.source,
        model: first.model,
        startedAt: first.sessionStartedAt,
        lastActiveAt: session?.lastActiveAt ?? null,
        hits: group.map(({ messageId, role, snippet, timestamp, toolName, context }) => ({ messageId, role, snippet, timestamp, toolName, context })),
      };
    });
    if (options.json) {
      writeJson(io, { query, totalHits: hits.length, sessions: groups });
      return;
    }
    if (groups.length === 0) {
      io.stdout.write(`No matches for "${query}".\n`);
      return;
    }
    const color = useColor(io);
    const s = styles(color);
    const now = io.now();
    const out: string[] = [
      `${hits.length} hit${hits.length === 1 ? "" : "s"} in ${groups.length} session${groups.length === 1 ? "" : "s"}${hits.length >= options.limit ? ` (the first ${options.limit}; raise --limit for more)` : ""}`,
    ];
    for (const group of groups) {
      const name = group.title ?? (group.preview === null ? "" : truncate(group.preview, 50));
      const when = relativeTime(group.lastActiveAt ?? group.startedAt, now);
      out.push("", `${s.bold(group.sessionId)}${name ? `  ${name}` : ""}  ${s.dim(`${group.source} · ${when}`)}`);
      for (const hit of group.hits) {
        const who = hit.toolName ? `${hit.role} (${hit.toolName})` : hit.role;
        out.push(`  ${s.dim(`${who} · ${relativeTime(hit.timestamp, now)}:`)} ${highlight(hit.snippet, color)}`);
      }
    }
    io.stdout.write(`${out.join("\n")}\n`);
  });
}

/** The store's `>>>match<<<` markers as bold colour on a terminal, else as `**match**`. */
function highlight(snippet: string, color: boolean): string {
  const s = styles(color);
  const folded = snippet.replace(/\s+/gu, " ").trim();
  return folded.replace(/>>>(.*?)<<</gu, (_m, word: string) => (color ? s.bold(s.yellow(word)) : `**${word}**`));
}
