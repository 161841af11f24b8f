/**
 * The workload both stores get: threads (with their user and messages) held in memory, so
 * ingest times only the stores' calls. Either synthetic (`--threads N --messages M`, the
 * issue's shape) or the shared dataset (sessions → threads, messages → messages).
 *
 * @module
 */
import type { ToolCall } from "../../src/index.js";
import { readLines } from "../dataset.js";

/** One message, in the shared dataset's terms (roles user, assistant, tool). */
export interface WorkMessage {
  role: "user" | "assistant" | "tool";
  content: string;
  /** Epoch seconds. */
  timestamp: number;
  toolCalls: ToolCall[] | null;
  toolName: string | null;
  toolCallId: string | null;
  tokenCount: number | null;
  finishReason: string | null;
}

/** One thread (a session, for us). */
export interface WorkThread {
  id: string;
  /** The user the thread belongs to (`Session.userId`; Mastra's `resourceId`). */
  userId: string;
  source: string;
  model: string | null;
  title: string | null;
  parentId: string | null;
  /** Epoch seconds. */
  startedAt: number;
  messages: WorkMessage[];
}

/** What both stores ingest and then read. */
export interface Workload {
  /** `synthetic 100×50` or `dataset medium`. */
  name: string;
  threads: WorkThread[];
  /** Distinct users in first-seen order (the listing phase cycles through them). */
  users: string[];
  messages: number;
}

const WORDS = (
  "the a session thread message user agent tool call reply model token store index search list read write " +
  "sqlite gateway memory context prompt answer question result error retry stream chunk turn history title " +
  "summary lineage export prune vacuum durable commit page cursor filter order newest oldest resource"
).split(" ");

/**
 * `threads` threads of `messages` messages each (user and assistant alternating, 20–120 words,
 * deterministic), spread round-robin over `users` users, one second apart per message.
 */
export function syntheticWorkload(threads: number, messages: number, users: number): Workload {
  let seed = 0x9e3779b9;
  const rand = (): number => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return seed / 2 ** 32;
  };
  const text = (words: number): string => Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]!).join(" ");
  const start = 1_760_000_000;
  const userIds = Array.from({ length: Math.min(users, threads) }, (_, i) => `user-${String(i).padStart(3, "0")}`);
  const list: WorkThread[] = [];
  for (let t = 0; t < threads; t++) {
    const startedAt = start + t * (messages + 10);
    list.push({
      id: `thread-${String(t).padStart(5, "0")}`,
      userId: userIds[t % userIds.length]!,
      source: "bench",
      model: "bench-model",
      title: `thread ${t}`,
      parentId: null,
      startedAt,
      messages: Array.from(
        { length: messages },
        (_, m): WorkMessage => ({
          role: m % 2 === 0 ? "user" : "assistant",
          content: text(20 + Math.floor(rand() * 100)),
          timestamp: startedAt + m + 1,
          toolCalls: null,
          toolName: null,
          toolCallId: null,
          tokenCount: null,
          finishReason: null,
        }),
      ),
    });
  }
  return { name: `synthetic ${threads}×${messages}`, threads: list, users: userIds, messages: threads * messages };
}

/** The user of a session without one: Mastra needs a `resourceId` on every thread. */
export const ANONYMOUS_USER = "anonymous";

/**
 * The shared dataset read into memory: a session line becomes a thread (its `user_id`, or
 * {@link ANONYMOUS_USER} when null, is the user), a message line a message of it. End lines
 * are left out (Mastra has no ended thread), for both stores alike.
 */
export async function datasetWorkload(jsonlPath: string, size: string): Promise<Workload> {
  const byId = new Map<string, WorkThread>();
  const threads: WorkThread[] = [];
  const users = new Set<string>();
  let messages = 0;
  for await (const line of readLines(jsonlPath)) {
    if (line.type === "session") {
      const thread: WorkThread = {
        id: line.id,
        userId: line.user_id ?? ANONYMOUS_USER,
        source: line.source,
        model: line.model,
        title: line.title,
        parentId: line.parent_session_id,
        startedAt: line.started_at,
        messages: [],
      };
      byId.set(line.id, thread);
      threads.push(thread);
      users.add(thread.userId);
    } else if (line.type === "message") {
      const thread = byId.get(line.session_id);
      if (thread === undefined) throw new Error(`dataset: message of unknown session ${line.session_id}`);
      if (line.role !== "user" && line.role !== "assistant" && line.role !== "tool") {
        throw new Error(`dataset: unexpected role ${JSON.stringify(line.role)}`);
      }
      thread.messages.push({
        role: line.role,
        content: line.content,
        timestamp: line.timestamp,
        toolCalls: line.tool_calls ?? null,
        toolName: line.tool_name ?? null,
        toolCallId: line.tool_call_id ?? null,
        tokenCount: line.token_count,
        finishReason: line.finish_reason ?? null,
      });
      messages++;
    }
  }
  return { name: `dataset ${size}`, threads, users: [...users], messages };
}
