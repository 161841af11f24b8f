/**
 * `session_search`: a function the agent can call (and `threadline sessions search
 * --discover`) to find earlier conversations. Full-text search, hits grouped by lineage
 * root (a compressed chain counts once), the current session excluded, the top N
 * sessions each with a window of messages around its best match and its first and last
 * exchanges as bookends, all cut to fit a character budget. A blank query browses the
 * most recent sessions.
 *
 * @module
 */
import type { Agent, AgentTool } from "../agents/index.js";
import { InvalidInputError, type AliasStore, type Message, type SessionHistory, type SessionSearch, type SourceIdentity } from "../store/index.js";
import { SESSION_SEARCH_SCOPES, scopeFilterFor, type OwnerIdentities, type SessionSearchScope } from "./search-scope.js";

/** Default and ceiling of sessions returned. */
export const DEFAULT_SESSION_SEARCH_LIMIT = 3;
export const MAX_SESSION_SEARCH_LIMIT = 10;
/** Default character budget of a whole result. */
export const DEFAULT_SESSION_SEARCH_BUDGET = 100_000;
/** Messages on each side of the best match. */
const WINDOW_RADIUS = 3;
/** Hits read to rank sessions. */
const HITS_READ = 200;

/** One message of a result (text only; tool calls collapsed to their names). */
export interface FoundMessage {
  role: Message["role"];
  text: string;
  timestamp: number;
  /** Whether this is the best-matching message. */
  match?: boolean;
}

/** One session of a result. */
export interface FoundSession {
  /** The root of the session's compression chain (the chain counts once). */
  rootSessionId: string;
  /** The session holding the best match (or, when browsing, the chain's live end). */
  sessionId: string;
  title: string | null;
  source: string;
  startedAt: number;
  lastActiveAt: number;
  /** Matching messages in the chain (0 when browsing). */
  matchCount: number;
  /** The best match with the messages around it. */
  window: FoundMessage[];
  /** The first and the last exchange of the session. */
  bookends: { first: FoundMessage[]; last: FoundMessage[] };
  /** The summariser's digest of the session, when one was given. */
  summary?: string;
}

/** What {@link sessionSearch} returns. */
export interface SessionSearchResult {
  query: string;
  mode: "search" | "browse";
  sessions: FoundSession[];
  /** Characters of message text in the result. */
  chars: number;
  /** Some text was cut to stay within the budget. */
  truncated: boolean;
}

/** Condenses a session for the result (e.g. the configured model); `null` keeps the windows. */
export type SessionSummariser = (session: FoundSession, signal?: AbortSignal) => Promise<string | null>;

/** Options of {@link sessionSearch}. */
export interface SessionSearchOptions {
  /** The session asking (its chain is left out). */
  currentSessionId?: string | null;
  /** Sessions to return (default 3, at most 10). */
  limit?: number;
  /** Characters of message text in the whole result (default 100,000). */
  charBudget?: number;
  /** Only sessions from these sources. */
  sources?: string[];
  /** Only sessions whose user is one of these ids (an empty list: none). */
  userIds?: string[];
  /** Only sessions whose (source, user id) is one of these pairs (an empty list: none). */
  identities?: SourceIdentity[];
  /** Only sessions of this chat. */
  chatId?: string;
  summarise?: SessionSummariser | null;
  signal?: AbortSignal;
}

function textOfMessage(message: Message): string {
  let text = "";
  if (typeof message.content === "string") text = message.content;
  else if (Array.isArray(message.content)) {
    text = message.content
      .filter((p) => p.type === "text" && typeof p.text === "string")
      .map((p) => p.text as string)
      .join("\n");
  }
  if (message.toolCalls && message.toolCalls.length > 0) {
    const names = message.toolCalls.map((c) => c.function.name).join(", ");
    text = `${text}${text ? " " : ""}[${message.toolCalls.length} tool call${message.toolCalls.length === 1 ? "" : "s"}: ${names}]`;
  }
  return text;
}

function found(message: Message, match = false): FoundMessage {
  const out: FoundMessage = { role: message.role, text: textOfMessage(message), timestamp: message.timestamp };
  if (match) out.match = true;
  return out;
}

/** The first exchange (first user message and the reply after it) and the last one. */
function bookendsOf(messages: Message[]): FoundSession["bookends"] {
  const visible = messages.filter((m) => m.role === "user" || m.role === "assistant");
  const firstUser = visible.findIndex((m) => m.role === "user");
  const first = firstUser < 0 ? visible.slice(0, 2) : visible.slice(firstUser, firstUser + 2);
  let lastUser = -1;
  for (let i = visible.length - 1; i >= 0; i--) {
    if (visible[i]!.role === "user") {
      lastUser = i;
      break;
    }
  }
  const last = lastUser <= firstUser ? [] : visible.slice(lastUser, lastUser + 2);
  return { first: first.map((m) => found(m)), last: last.map((m) => found(m)) };
}

async function chainRoot(db: SessionHistory, sessionId: string, cache: Map<string, string>): Promise<string> {
  const known = cache.get(sessionId);
  if (known !== undefined) return known;
  // Walk up while the parent ended by compression: those links make one conversation.
  let root = sessionId;
  for (const ancestor of await db.getAncestors(sessionId)) {
    if (ancestor.endReason !== "compression") break;
    root = ancestor.id;
  }
  cache.set(sessionId, root);
  return root;
}

/** Cuts every text so the total fits the budget, longest texts first. */
function fitBudget(sessions: FoundSession[], budget: number): { chars: number; truncated: boolean } {
  const all: FoundMessage[] = sessions.flatMap((s) => [...s.window, ...s.bookends.first, ...s.bookends.last]);
  let total = all.reduce((n, m) => n + m.text.length, 0) + sessions.reduce((n, s) => n + (s.summary?.length ?? 0), 0);
  if (total <= budget) return { chars: total, truncated: false };
  // Find the largest per-message cap that fits.
  let low = 0;
  let high = Math.max(...all.map((m) => m.text.length));
  const fixed = sessions.reduce((n, s) => n + (s.summary?.length ?? 0), 0);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    const size = fixed + all.reduce((n, m) => n + Math.min(m.text.length, mid), 0);
    if (size <= budget) low = mid;
    else high = mid - 1;
  }
  for (const m of all) if (m.text.length > low) m.text = `${m.text.slice(0, Math.max(0, low - 1))}…`;
  total = fixed + all.reduce((n, m) => n + m.text.length, 0);
  return { chars: total, truncated: true };
}

/**
 * Searches earlier sessions (or browses recent ones for a blank query).
 *
 * @example
 * const result = await sessionSearch(db, "deploy checklist", { currentSessionId: id });
 * for (const s of result.sessions) console.log(s.title, s.window.map((m) => m.text));
 */
export async function sessionSearch(
  db: SessionHistory & SessionSearch & AliasStore,
  query: string,
  options: SessionSearchOptions = {},
): Promise<SessionSearchResult> {
  const limit = options.limit ?? DEFAULT_SESSION_SEARCH_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SESSION_SEARCH_LIMIT) {
    throw new InvalidInputError(`limit must be a whole number from 1 to ${MAX_SESSION_SEARCH_LIMIT} (got ${String(limit)}).`, { field: "limit" });
  }
  const budget = options.charBudget ?? DEFAULT_SESSION_SEARCH_BUDGET;
  if (!Number.isSafeInteger(budget) || budget < 100) {
    throw new InvalidInputError(`charBudget must be a whole number of characters ≥ 100 (got ${String(budget)}).`, { field: "charBudget" });
  }
  const text = typeof query === "string" ? query.trim() : "";
  const roots = new Map<string, string>();
  const currentRoot = options.currentSessionId ? await chainRoot(db, options.currentSessionId, roots) : null;
  const sessions: FoundSession[] = [];
  const filter = {
    ...(options.sources ? { sources: options.sources } : {}),
    ...(options.userIds ? { userIds: options.userIds } : {}),
    ...(options.identities ? { identities: options.identities } : {}),
    ...(options.chatId === undefined ? {} : { chatId: options.chatId }),
  };

  if (text === "") {
    const page = await db.listSessions({ limit: Math.min(1000, limit + 5), ...filter });
    for (const summary of page.items) {
      if (sessions.length >= limit) break;
      const root = await chainRoot(db, summary.id, roots);
      if (root === currentRoot) continue;
      const messages = await db.getMessages(summary.id);
      const rootSession = root === summary.id ? summary : ((await db.getSession(root)) ?? summary);
      sessions.push({
        rootSessionId: root,
        sessionId: summary.id,
        title: summary.title,
        source: summary.source,
        startedAt: rootSession.startedAt,
        lastActiveAt: summary.lastActiveAt,
        matchCount: 0,
        window: messages.slice(-2 * WINDOW_RADIUS - 1).map((m) => found(m)),
        bookends: bookendsOf(messages),
      });
    }
  } else {
    const hits = await db.searchMessages(text, { limit: HITS_READ, ...filter });
    const groups = new Map<string, { best: (typeof hits)[number]; count: number }>();
    for (const hit of hits) {
      const root = await chainRoot(db, hit.sessionId, roots);
      if (root === currentRoot) continue;
      const group = groups.get(root);
      if (group === undefined) groups.set(root, { best: hit, count: 1 });
      else group.count += 1;
    }
    for (const [root, { best, count }] of [...groups.entries()].slice(0, limit)) {
      const messages = await db.getMessages(best.sessionId);
      const at = messages.findIndex((m) => m.id === best.messageId);
      const from = Math.max(0, at - WINDOW_RADIUS);
      const session = await db.getSession(best.sessionId);
      const rootSession = root === best.sessionId ? session : await db.getSession(root);
      sessions.push({
        rootSessionId: root,
        sessionId: best.sessionId,
        title: session?.title ?? null,
        source: best.source,
        startedAt: rootSession?.startedAt ?? best.sessionStartedAt,
        lastActiveAt: session?.lastActiveAt ?? best.timestamp,
        matchCount: count,
        window: messages.slice(from, at + WINDOW_RADIUS + 1).map((m) => found(m, m.id === best.messageId)),
        bookends: bookendsOf(messages),
      });
    }
  }

  if (options.summarise) {
    for (const session of sessions) {
      const summary = await options.summarise(session, options.signal).catch(() => null);
      if (summary !== null && summary.trim() !== "") {
        session.summary = summary;
        session.window = [];
      }
    }
  }
  const { chars, truncated } = fitBudget(sessions, budget);
  return { query: text, mode: text === "" ? "browse" : "search", sessions, chars, truncated };
}

/** The result as compact text for a model. */
export function formatSessionSearch(result: SessionSearchResult): string {
  if (result.sessions.length === 0) {
    return result.mode === "browse" ? "No earlier sessions." : `No earlier sessions mention "${result.query}".`;
  }
  const lines: string[] = [];
  const render = (m: FoundMessage): string => `${m.match ? ">> " : ""}${m.role}: ${m.text}`;
  for (const s of result.sessions) {
    const when = new Date(s.lastActiveAt * 1000).toISOString().slice(0, 16).replace("T", " ");
    lines.push(`## ${s.title ?? "(untitled)"} — session ${s.sessionId} (${s.source}, last active ${when}${s.matchCount ? `, ${s.matchCount} matches` : ""})`);
    if (s.summary) lines.push(`Summary: ${s.summary}`);
    if (s.bookends.first.length) lines.push("First exchange:", ...s.bookends.first.map(render));
    if (s.window.length) lines.push(result.mode === "search" ? "Around the best match:" : "Latest messages:", ...s.window.map(render));
    if (s.bookends.last.length) lines.push("Last exchange:", ...s.bookends.last.map(render));
    lines.push("");
  }
  if (result.truncated) lines.push("(Some messages were shortened to fit.)");
  return lines.join("\n").trimEnd();
}

/**
 * When the model should use `session_search` (the tool's {@link AgentTool.guidance}, put in
 * the system prompt by the gateway): before asking the user to repeat something from before.
 */
export const SESSION_SEARCH_GUIDANCE =
  "If the user mentions something from an earlier conversation, or earlier context would likely help, " +
  "look it up with session_search first instead of asking them to repeat it.";

/** Options of {@link sessionSearchTool}. */
export interface SessionSearchToolOptions {
  charBudget?: number;
  summarise?: SessionSummariser | null;
  /** Whose sessions the person speaking may see (default `user`, the narrowest): see {@link SessionSearchScope}. */
  scope?: SessionSearchScope;
  /** The operator's ids per platform (config `gateway.owner`): the owner's sessions on all of them are one person's. */
  owner?: OwnerIdentities;
}

/**
 * The `session_search` function for agents. It searches only what the person speaking (the
 * call's `speaker`, given by the gateway) may see (see {@link SessionSearchScope}), not what
 * the session's creator may see; the scope is applied by the store, so another user's
 * messages are never read. Without a `speaker` (a library caller), the session's own user
 * stands in.
 *
 * @example
 * const agent = new OpenAiCompatibleAgent({ ...provider, tools: [sessionSearchTool(db, { scope: "user" })] });
 */
export function sessionSearchTool(db: SessionHistory & SessionSearch & AliasStore, options: SessionSearchToolOptions = {}): AgentTool {
  const scope = options.scope ?? "user";
  if (!SESSION_SEARCH_SCOPES.includes(scope)) {
    throw new InvalidInputError(`scope must be one of ${SESSION_SEARCH_SCOPES.join(", ")} (got ${String(scope)}).`, { field: "scope" });
  }
  return {
    name: "session_search",
    description:
      "Search this user's earlier conversations (full text; only conversations this user took part in). Returns the best-matching sessions with the messages around each match " +
      "and their first and last exchanges. Use a blank query to list the most recent sessions.",
    guidance: SESSION_SEARCH_GUIDANCE,
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "Words to look for; blank to browse recent sessions." },
        limit: { type: "integer", minimum: 1, maximum: MAX_SESSION_SEARCH_LIMIT, description: "How many sessions (default 3)." },
      },
      required: [],
      additionalProperties: false,
    },
    async execute(args, context) {
      const query = typeof args["query"] === "string" ? args["query"] : "";
      const limit = typeof args["limit"] === "number" ? Math.min(MAX_SESSION_SEARCH_LIMIT, Math.max(1, Math.floor(args["limit"]))) : undefined;
      const filter = await scopeFilterFor(db, context.sessionId, scope, {
        ...(context.speaker === undefined ? {} : { speaker: context.speaker }),
        ...(options.owner === undefined ? {} : { owner: options.owner }),
      });
      const result = await sessionSearch(db, query, {
        ...filter,
        currentSessionId: context.sessionId,
        ...(limit === undefined ? {} : { limit }),
        ...(options.charBudget === undefined ? {} : { charBudget: options.charBudget }),
        summarise: options.summarise ?? null,
        signal: context.signal,
      });
      return formatSessionSearch(result);
    },
  };
}

/**
 * A summariser backed by an agent (the configured model): one short digest per session.
 *
 * @example
 * sessionSearchTool(db, { summarise: agentSummariser(new OpenAiCompatibleAgent(provider)) });
 */
export function agentSummariser(agent: Agent): SessionSummariser {
  return async (session, signal) => {
    const render = (m: FoundMessage): string => `${m.role}: ${m.text}`;
    const text = [...session.bookends.first, ...session.window, ...session.bookends.last].map(render).join("\n").slice(0, 20_000);
    const result = await agent.runTurn({
      messages: [{ role: "user", content: `Summarise this earlier conversation in at most 5 sentences (facts, decisions, open points):\n\n${text}` }],
      contextPrompt: "",
      signal: signal ?? AbortSignal.timeout(60_000),
      sessionId: session.sessionId,
    });
    const last = [...result.messages].reverse().find((m) => m.role === "assistant");
    return typeof last?.content === "string" ? last.content : null;
  };
}
