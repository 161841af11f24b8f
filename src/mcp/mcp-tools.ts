/**
 * The tools of `threadline mcp`: `session_search` (the agents' built-in tool, reused as is),
 * `sessions_list`, `session_show` (a transcript, paged with a cursor) and, only on a server
 * started with writes allowed, `session_rename` and `session_delete`. Each result carries the
 * data twice: as `structuredContent` (checked against the tool's output schema) and as text
 * for the model, with every stored text inside a delimited data block
 * ({@link dataToolResult}). Arguments are checked by the tools' input schemas (unknown
 * arguments are refused, so a typo never silently widens a request); a bad argument or a
 * store refusal is a tool error (`isError`) saying what was wrong and what to do.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { ThreadlineError, MESSAGE_ROLES, type Message, type SessionDB, type SessionSummary, type Session } from "../store/index.js";
import { formatSessionSearch, sessionSearch, type SessionSummariser } from "../tools/index.js";
import { MAX_SESSION_SEARCH_LIMIT } from "../tools/internal.js";
import { dataToolResult } from "./untrusted-data.js";
import { decodeTranscriptCursor, encodeTranscriptCursor } from "./transcript-cursor.js";
import { sessionNotFound, setVisibleTitle, userFilter, visibleSession, type McpCaller } from "./tenant-scope.js";

/** Page size ceiling of `sessions_list` and `session_show`. */
export const MAX_PAGE_SIZE = 100;
/** Default page size of `sessions_list` and `session_show`. */
export const DEFAULT_PAGE_SIZE = 20;
/** Characters of one message's text in `session_show` (longer texts are cut, flagged `truncated`). */
export const MAX_MESSAGE_CHARS = 20_000;
/** Characters of one tool call's arguments in `session_show`. */
const MAX_ARGUMENT_CHARS = 2_000;

/** What the tools are given. */
export interface McpToolOptions {
  db: SessionDB;
  /** Whose sessions the caller sees. */
  caller: McpCaller;
  /** Register `session_rename` and `session_delete` (default false: they are not even listed). */
  allowWrites: boolean;
  /** Character budget of a `session_search` result (the built-in tool's `charBudget`). */
  searchCharBudget?: number;
  /** The built-in tool's summariser (config `tools.sessionSearch.summarise`), or `null`. */
  summarise?: SessionSummariser | null;
  /** Where unexpected errors go (the caller sees only "internal error"). */
  onError: (error: unknown, tool: string) => void;
}

// --- input schemas -------------------------------------------------------------------

/** An object schema that refuses unknown arguments, naming them and the ones the tool takes. */
function argumentsOf<Shape extends z.ZodRawShape>(shape: Shape): z.ZodObject<Shape, z.core.$strict> {
  const names = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys" ? `unknown argument(s) ${issue.keys.map((k) => `'${k}'`).join(", ")}; this tool takes: ${names}` : undefined,
  });
}

const pageSize = (tool: string): z.ZodOptional<z.ZodNumber> =>
  z
    .number({ error: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
    .int({ error: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
    .min(1, { error: `limit must be at least 1 (the ${tool} page size, default ${DEFAULT_PAGE_SIZE})` })
    .max(MAX_PAGE_SIZE, { error: `limit must be at most ${MAX_PAGE_SIZE}; page through the rest with nextCursor` })
    .optional()
    .describe(`Page size, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`);

const sessionId = z
  .string({ error: "id must be a session id (a string), e.g. from sessions_list or session_search" })
  .trim()
  .min(1, { error: "id must not be empty: give a session id from sessions_list or session_search" })
  .max(200, { error: "id is too long to be a session id (at most 200 characters)" })
  .describe("The exact session id (from sessions_list or session_search).");

const sources = z
  .array(z.string().min(1, { error: "a source must not be empty" }), { error: 'source must be a list of source names, e.g. ["cli", "telegram"]' })
  .max(20, { error: "source lists at most 20 sources" })
  .optional()
  .describe("Only sessions from these sources (cli, telegram, api-server, …).");

const searchInput = argumentsOf({
  query: z
    .string({ error: "query must be a string (blank to browse recent sessions)" })
    .max(10_000, { error: "query must be at most 10,000 characters" })
    .optional()
    .describe('Words to look for ("exact phrase", prefix*, OR, NOT); blank or absent to browse the most recent sessions.'),
  limit: z
    .number({ error: `limit must be a whole number from 1 to ${MAX_SESSION_SEARCH_LIMIT}` })
    .int({ error: `limit must be a whole number from 1 to ${MAX_SESSION_SEARCH_LIMIT}` })
    .min(1, { error: `limit must be at least 1 (sessions to return, default 3)` })
    .max(MAX_SESSION_SEARCH_LIMIT, { error: `limit must be at most ${MAX_SESSION_SEARCH_LIMIT} sessions` })
    .optional()
    .describe(`How many sessions, 1–${MAX_SESSION_SEARCH_LIMIT} (default 3).`),
  source: sources,
});

const listInput = argumentsOf({
  limit: pageSize("sessions_list"),
  cursor: z
    .string({ error: "cursor must be the nextCursor string of the previous sessions_list result" })
    .min(1, { error: "cursor must not be empty: leave it out for the first page" })
    .optional()
    .describe("nextCursor of the previous page (same filters); absent for the first page."),
  source: sources,
  includeChildren: z
    .boolean({ error: "includeChildren must be true or false" })
    .optional()
    .describe("List every session of a compression chain as its own row (default false: a chain once, as its latest session)."),
});

const showInput = argumentsOf({
  id: sessionId,
  cursor: z
    .string({ error: "cursor must be the nextCursor string of the previous session_show result" })
    .min(1, { error: "cursor must not be empty: leave it out to start at the first message" })
    .optional()
    .describe("nextCursor of the previous page of this session; absent to start at the first message."),
  limit: pageSize("session_show"),
});

const renameInput = argumentsOf({
  id: sessionId,
  title: z
    .string({ error: "title must be a string (an empty string clears the title)" })
    .max(1_000, { error: "title must be at most 100 characters after cleaning (1,000 before)" })
    .describe("The new title (at most 100 characters; an empty string clears it). Titles are unique."),
});

const deleteInput = argumentsOf({ id: sessionId });

// --- output schemas ------------------------------------------------------------------

const role = z.enum(MESSAGE_ROLES);
const foundMessage = z.object({ role, text: z.string(), timestamp: z.number(), match: z.boolean().optional() });
const searchOutput = z.object({
  query: z.string(),
  mode: z.enum(["search", "browse"]),
  sessions: z.array(
    z.object({
      rootSessionId: z.string(),
      sessionId: z.string(),
      title: z.string().nullable(),
      source: z.string(),
      startedAt: z.number(),
      lastActiveAt: z.number(),
      matchCount: z.number(),
      window: z.array(foundMessage),
      bookends: z.object({ first: z.array(foundMessage), last: z.array(foundMessage) }),
      summary: z.string().optional(),
    }),
  ),
  chars: z.number(),
  truncated: z.boolean(),
});

const sessionRow = z.object({
  id: z.string(),
  title: z.string().nullable(),
  source: z.string(),
  preview: z.string().nullable(),
  model: z.string().nullable(),
  startedAt: z.number(),
  lastActiveAt: z.number(),
  endedAt: z.number().nullable(),
  endReason: z.string().nullable(),
  messageCount: z.number(),
  parentSessionId: z.string().nullable(),
});
const listOutput = z.object({ items: z.array(sessionRow), nextCursor: z.string().nullable() });

const shownMessage = z.object({
  id: z.number(),
  role,
  text: z.string(),
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).nullable(),
  toolName: z.string().nullable(),
  toolCallId: z.string().nullable(),
  timestamp: z.number(),
  truncated: z.boolean(),
});
const showOutput = z.object({ session: sessionRow, messages: z.array(shownMessage), nextCursor: z.string().nullable() });
const renameOutput = z.object({ id: z.string(), title: z.string().nullable() });
const deleteOutput = z.object({ id: z.string(), deleted: z.boolean() });

/** A row of `sessions_list` (and the session of `session_show`). */
export type McpSessionRow = z.infer<typeof sessionRow>;
/** A message of `session_show`. */
export type McpShownMessage = z.infer<typeof shownMessage>;

// --- shaping -------------------------------------------------------------------------

/** The listed fields of a session (stored, untrusted: title and preview are user text). */
export function sessionRowOf(s: SessionSummary | Session): McpSessionRow {
  return {
    id: s.id,
    title: s.title,
    source: s.source,
    preview: s.preview,
    model: s.model,
    startedAt: s.startedAt,
    lastActiveAt: s.lastActiveAt,
    endedAt: s.endedAt,
    endReason: s.endReason,
    messageCount: s.messageCount,
    parentSessionId: s.parentSessionId,
  };
}

function cut(text: string, max: number): { text: string; cut: boolean } {
  return text.length <= max ? { text, cut: false } : { text: `${text.slice(0, max - 1)}…`, cut: true };
}

/** A message as `session_show` returns it: text parts joined, other parts named, long texts cut. */
export function shownMessageOf(m: Message): McpShownMessage {
  const raw =
    m.content === null || m.content === undefined
      ? ""
      : typeof m.content === "string"
        ? m.content
        : m.content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : `[${part.type}]`)).join("\n");
  const text = cut(raw, MAX_MESSAGE_CHARS);
  let argsCut = false;
  const toolCalls =
    m.toolCalls === null || m.toolCalls.length === 0
      ? null
      : m.toolCalls.map((c) => {
          const args = cut(typeof c.function?.arguments === "string" ? c.function.arguments : JSON.stringify(c.function?.arguments ?? ""), MAX_ARGUMENT_CHARS);
          argsCut ||= args.cut;
          return { id: String(c.id), name: String(c.function?.name ?? ""), arguments: args.text };
        });
  return {
    id: m.id,
    role: m.role,
    text: text.text,
    toolCalls,
    toolName: m.toolName,
    toolCallId: m.toolCallId,
    timestamp: m.timestamp,
    truncated: text.cut || argsCut,
  };
}

const iso = (at: number): string => new Date(at * 1000).toISOString().slice(0, 16).replace("T", " ");

function renderRow(s: McpSessionRow): string {
  const title = s.title === null ? "(untitled)" : JSON.stringify(s.title);
  const preview = s.preview === null ? "" : ` — first message: ${JSON.stringify(s.preview)}`;
  return `${s.id}  ${title}  (${s.source}, ${s.messageCount} messages, last active ${iso(s.lastActiveAt)} UTC${s.endedAt === null ? "" : `, ended${s.endReason ? `: ${s.endReason}` : ""}`})${preview}`;
}

function renderMessage(m: McpShownMessage): string {
  const who = m.role === "tool" && m.toolName ? `tool (${m.toolName})` : m.role;
  const calls = m.toolCalls === null ? "" : `${m.text === "" ? "" : " "}${m.toolCalls.map((c) => `[tool call ${c.name}(${c.arguments})]`).join(" ")}`;
  return `#${m.id} ${who} ${iso(m.timestamp)} UTC: ${m.text}${calls}${m.truncated ? " [cut]" : ""}`;
}

// --- errors --------------------------------------------------------------------------

function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Runs a tool body; store refusals become tool errors with their message, anything else "internal error". */
async function guarded(tool: string, onError: McpToolOptions["onError"], body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof ThreadlineError && error.code !== "TL_ERR_INTERNAL" && error.code !== "TL_ERR_STORE" && error.code !== "TL_ERR_CORRUPT") {
      return toolError(`${tool}: ${error.message}`);
    }
    onError(error, tool);
    return toolError(`${tool}: internal error (the server logged the details); try again, or report it if it persists.`);
  }
}

// --- registration --------------------------------------------------------------------

/** Registers the tools on `server` for one caller. */
export function registerTools(server: McpServer, options: McpToolOptions): void {
  const { db, caller, onError } = options;
  const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

  server.registerTool(
    "session_search",
    {
      title: "Search earlier sessions",
      description:
        "Full-text search over stored conversations. Returns the best-matching sessions (a compressed chain counts once), each with the messages around its best match " +
        "and its first and last exchanges; a blank query lists the most recent sessions. The same results as the agents' built-in session_search tool.",
      inputSchema: searchInput,
      outputSchema: searchOutput,
      annotations: read,
    },
    async (args) =>
      guarded("session_search", onError, async () => {
        const result = await sessionSearch(db, args.query ?? "", {
          ...(args.limit === undefined ? {} : { limit: args.limit }),
          ...(args.source === undefined ? {} : { sources: args.source }),
          ...(caller.userId === null ? {} : { userIds: [caller.userId] }),
          ...(options.searchCharBudget === undefined ? {} : { charBudget: options.searchCharBudget }),
          summarise: options.summarise ?? null,
        });
        const what = result.mode === "browse" ? "The most recent sessions" : `Sessions matching ${JSON.stringify(result.query)}`;
        return dataToolResult(what, formatSessionSearch(result), { ...result }, [`${result.sessions.length} session(s).`]);
      }),
  );

  server.registerTool(
    "sessions_list",
    {
      title: "List sessions",
      description: "Stored sessions, most recent activity first, a page at a time (pass nextCursor back as cursor for the next page).",
      inputSchema: listInput,
      outputSchema: listOutput,
      annotations: read,
    },
    async (args) =>
      guarded("sessions_list", onError, async () => {
        const page = await db.listSessions({
          limit: args.limit ?? DEFAULT_PAGE_SIZE,
          ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
          ...(args.source === undefined ? {} : { sources: args.source }),
          includeChildren: args.includeChildren ?? false,
          ...userFilter(caller),
        });
        const items = page.items.map(sessionRowOf);
        const notes = [
          page.nextCursor === null ? `${items.length} session(s); this is the last page.` : `${items.length} session(s); nextCursor: ${page.nextCursor}`,
        ];
        return dataToolResult(
          "Stored sessions, one per line (id, title, source, counts, first message)",
          items.map(renderRow).join("\n"),
          { items, nextCursor: page.nextCursor },
          notes,
        );
      }),
  );

  server.registerTool(
    "session_show",
    {
      title: "Show a session's messages",
      description:
        `A session's transcript in order, ${DEFAULT_PAGE_SIZE} messages per page by default (at most ${MAX_PAGE_SIZE}); pass nextCursor back as cursor for the next page. ` +
        `Texts over ${MAX_MESSAGE_CHARS.toLocaleString("en")} characters are cut (truncated: true).`,
      inputSchema: showInput,
      outputSchema: showOutput,
      annotations: read,
    },
    async (args) =>
      guarded("session_show", onError, async () => {
        const session = await visibleSession(db, caller, args.id);
        const afterId = args.cursor === undefined ? undefined : decodeTranscriptCursor(args.cursor, session.id);
        const limit = args.limit ?? DEFAULT_PAGE_SIZE;
        const rows = await db.getMessages(session.id, { limit: limit + 1, ...(afterId === undefined ? {} : { afterId }) });
        const messages = rows.slice(0, limit).map(shownMessageOf);
        const nextCursor = rows.length > limit ? encodeTranscriptCursor(session.id, messages[messages.length - 1]!.id) : null;
        const row = sessionRowOf(session);
        const header = `Session ${row.id} ${row.title === null ? "(untitled)" : JSON.stringify(row.title)} (${row.source}, ${row.messageCount} messages, started ${iso(session.startedAt)} UTC)`;
        const body = [header, ...messages.map(renderMessage)].join("\n");
        const notes = [
          nextCursor === null ? `${messages.length} message(s); no more messages after these.` : `${messages.length} message(s); nextCursor: ${nextCursor}`,
        ];
        return dataToolResult(`A page of the transcript of session ${row.id}`, body, { session: row, messages, nextCursor }, notes);
      }),
  );

  if (!options.allowWrites) return;

  server.registerTool(
    "session_rename",
    {
      title: "Rename a session",
      description: "Sets a session's title (at most 100 characters; titles are unique; an empty string clears it). Returns the stored, cleaned title.",
      inputSchema: renameInput,
      outputSchema: renameOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded("session_rename", onError, async () => {
        const title = await setVisibleTitle(db, caller, args.id, args.title);
        const text = title === null ? `Session ${args.id} no longer has a title.` : `Session ${args.id} is now titled ${JSON.stringify(title)}.`;
        return { content: [{ type: "text", text }], structuredContent: { id: args.id, title } };
      }),
  );

  server.registerTool(
    "session_delete",
    {
      title: "Delete a session",
      description: "Deletes a session and all its messages, for good (its child sessions are kept, detached).",
      inputSchema: deleteInput,
      outputSchema: deleteOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args) =>
      guarded("session_delete", onError, async () => {
        await visibleSession(db, caller, args.id);
        if (!(await db.deleteSession(args.id))) throw sessionNotFound(args.id);
        return { content: [{ type: "text", text: `Deleted session ${args.id} and its messages.` }], structuredContent: { id: args.id, deleted: true } };
      }),
  );
}
