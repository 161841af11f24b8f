/**
 * Messages between the gateway benchmark's three processes: the orchestrator (run.ts),
 * the load driver (driver.ts, over its IPC channel) and the probe preloaded into the
 * gateway (probe.mjs, over the gateway child's IPC channel).
 */

/** The chat platform a phase goes through: the api-server adapter (HTTP) or Telegram (through the fake Bot API). */
export type BenchPlatform = "api-server" | "telegram";

/** How the driver shares conversations out over several gateway replicas. */
export type ReplicaSpread = "sticky" | "round-robin";

/** C closed-loop conversations of `turns` turns each (a conversation sends its next message after the reply). */
export interface ConversationsJob {
  kind: "conversations";
  /** `api-server`: POSTs to the gateway; `telegram`: updates pushed into the driver's fake Bot API (default api-server). */
  platform?: BenchPlatform;
  /** The gateway (api-server; ignored for telegram). */
  url: string;
  /**
   * Several gateway replicas (api-server only; `url` is then ignored): conversation c goes to
   * `urls[c % n]` for all its turns (`spread: "sticky"`, what a load balancer with session
   * affinity does), or turn t of conversation c to `urls[(c + t) % n]` (`"round-robin"`: every
   * turn on another replica than the last, so the session's lease and queue cross replicas).
   */
  urls?: string[];
  /** How `urls` are shared out (default sticky). */
  spread?: ReplicaSpread;
  concurrency: number;
  turns: number;
  /** Unique per job: session keys and message ids are derived from it. */
  tag: string;
  /** Stop starting new turns this many ms after the job began (turns in flight finish); default none. */
  deadlineMs?: number;
}

/** `bursts` times: `size` messages sent back to back into one session key (one socket each). */
export interface BurstJob {
  kind: "burst";
  url: string;
  bursts: number;
  size: number;
  /** Wait this long after a request is written before sending the next one (defines the send order). */
  gapMs: number;
  tag: string;
}

/** `sessions` distinct session keys each send one message, `concurrency` in flight. */
export interface SessionsJob {
  kind: "sessions";
  url: string;
  sessions: number;
  concurrency: number;
  tag: string;
}

/** Starts or stops the fake Telegram Bot API inside the driver (test/fakes/telegram), on 127.0.0.1. */
export interface TelegramFakeJob {
  kind: "telegram-fake";
  action: "start" | "stop";
}

export type DriverJob = ConversationsJob | BurstJob | SessionsJob | TelegramFakeJob;

/** One timed request as the driver saw it. */
export interface RequestSample {
  /** The X-Bench-Id header (and `bench:<id>` in the message text). */
  id: string;
  /** Request issued → last byte of the reply read (telegram: update pushed into the fake → the bot's sendMessage for it received), milliseconds. */
  clientMs: number;
  /** When the request was issued, epoch milliseconds (performance.timeOrigin + now: comparable across processes). */
  issuedAtMs: number;
  /** HTTP 200 (telegram: a sendMessage in reply to the message) and the reply is `Echo: <the message sent>`. */
  ok: boolean;
}

export interface ConversationsResult {
  kind: "conversations";
  /** First request issued → last reply read. */
  seconds: number;
  /** Turns sent (all of them unless `deadlineMs` cut the job short). */
  attempted: number;
  /** True when `deadlineMs` stopped conversations before their last turn. */
  cutShort: boolean;
  samples: RequestSample[];
  errors: number;
  /** The first few error descriptions. */
  errorExamples: string[];
}

/** One burst: what was sent, in send order, and what each request got back. */
export interface BurstRecord {
  key: string;
  ids: string[];
  texts: string[];
  /** The reply text of each request (null: no 200 reply). */
  replies: (string | null)[];
  /** X-Threadline-Session-Id of each reply. */
  sessionIds: (string | null)[];
}

export interface BurstResult {
  kind: "burst";
  bursts: BurstRecord[];
}

export interface SessionsResult {
  kind: "sessions";
  seconds: number;
  sent: number;
  ok: number;
  errors: number;
  errorExamples: string[];
}

/** The fake's Bot API root and the (fake) token it accepts; both empty after `stop`. */
export interface TelegramFakeResult {
  kind: "telegram-fake";
  apiRoot: string;
  token: string;
  /** getUpdates calls the fake answered so far (long polls). */
  getUpdatesCalls: number;
}

export type DriverResult = ConversationsResult | BurstResult | SessionsResult | TelegramFakeResult;

/** What the driver sends back over IPC. */
export type DriverReply = { ok: true; result: DriverResult } | { ok: false; error: string };

/** Commands to the probe in the gateway process. */
export type ProbeCommand = { seq: number; cmd: "record"; on: boolean } | { seq: number; cmd: "collect" } | { seq: number; cmd: "gc" };

/** One request as the gateway saw it (times are the gateway's performance.now(), ms). */
export interface ProbeSample {
  id: string;
  /** `http.server.request.start`: the request's headers were parsed. */
  startMs: number;
  /** `http.server.response.finish`: the whole reply was handed to the socket (null: not finished). */
  endMs: number | null;
  /** Time inside EchoAgent.runTurn for the turn that answered this message (null: no turn seen). */
  agentMs: number | null;
}

export type ProbeReply =
  | { seq: number; cmd: "record" }
  | {
      seq: number;
      cmd: "collect";
      samples: ProbeSample[];
      /** Share of the time since `record` that the gateway's event loop was busy (JS, or a synchronous call such as a SQLite commit's fsync): 1 = saturated. */
      eventLoopUtilization: number;
    }
  | { seq: number; cmd: "gc"; exposed: boolean; memory: ProbeMemory };

/** process.memoryUsage() of the gateway after the forced GC, bytes. */
export interface ProbeMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** The message text carrying a bench id; the probe and the checks parse it back. */
export function benchText(id: string): string {
  return `bench:${id} please repeat this line back to me`;
}
