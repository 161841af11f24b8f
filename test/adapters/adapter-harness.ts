/**
 * The harness of the chat adapters' in-process tests (test/adapters/<platform>/): a real
 * SQLite store in a temp folder, the real GatewayRunner with an agent that answers from the
 * message, and a logger that records every line. Each platform's test makes its adapter
 * against its local fake and hands it to {@link adapterHarness}; what differs per platform
 * (the fake, the adapter's options, an HTTP server for webhooks, when the runner starts and
 * stops) stays in that test.
 *
 * - {@link useCleanups}: call once at the top of a test file; what is pushed runs after each test.
 * - {@link ReplyAgent}, {@link lastUserText}: the agent (records its inputs), and the text it answers.
 * - {@link recordingLogger}: a {@link GatewayLogger} keeping {@link Logged} lines.
 * - {@link TEST_RULES}: the answer rules the tests start from.
 * - {@link tempDatabase}, {@link adapterHarness}; {@link serveWebhooks} for adapters with routes on
 *   the gateway's HTTP server.
 *
 * @module
 */
import { DEFAULT_COMPRESSION_SETTINGS } from "../../src/context/index.js";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach } from "vitest";
import type { AnswerRules } from "../../src/adapters/chat/index.js";
import type { Agent, AgentTurnInput } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter, type Adapter, type GatewayLogger } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";

/** What a test undoes after it (run last pushed first; failures ignored). */
export type Cleanups = Array<() => Promise<unknown>>;

/** A list of cleanups run after each test of the calling file, last pushed first. */
export function useCleanups(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!().catch(() => {});
  });
  return cleanups;
}

/** An agent answering `answer(input)`, keeping every input it was given. */
export class ReplyAgent implements Agent {
  readonly name = "reply";
  readonly inputs: AgentTurnInput[] = [];
  constructor(readonly answer: (input: AgentTurnInput) => string) {}
  async runTurn(input: AgentTurnInput) {
    this.inputs.push(input);
    return { messages: [{ role: "assistant" as const, content: this.answer(input) }] };
  }
}

/** The text of the last user message of a turn (text parts joined with newlines). */
export function lastUserText(input: AgentTurnInput): string {
  const last = [...input.messages].reverse().find((m) => m.role === "user");
  if (typeof last?.content === "string") return last.content;
  return (last?.content ?? []).map((p) => ("text" in p ? p.text : "")).join("\n");
}

/** One line a {@link recordingLogger} kept. */
export interface Logged {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

/** A {@link GatewayLogger} keeping its lines, with `text()`: all of them as JSON (errors with message, stack and cause), to search for secrets. */
export type RecordingLogger = GatewayLogger & { lines: Logged[]; text(): string };

/** A logger that keeps every line (see {@link RecordingLogger}). */
export function recordingLogger(): RecordingLogger {
  const lines: Logged[] = [];
  const log =
    (level: string) =>
    (obj: object, msg = "") =>
      lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return {
    lines,
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    debug: log("debug"),
    text: () =>
      JSON.stringify(
        lines.map((l) => ({
          ...l,
          obj: Object.fromEntries(
            Object.entries(l.obj).map(([k, v]) => [k, v instanceof Error ? { message: v.message, stack: v.stack, cause: String(v.cause) } : v]),
          ),
        })),
      ),
  };
}

/** The answer rules the tests start from: DMs, and mentions/replies in groups; no bots; no allowlists. */
export const TEST_RULES: AnswerRules = { allowedUsers: [], allowedChats: [], groupReply: "mention", answerBots: false };

/** A new SQLite store in a temp folder `tl-<name>-…`, the folder removed after the test (closing the store is the caller's). */
export async function tempDatabase(cleanups: Cleanups, name: string): Promise<SessionDB> {
  const dir = await mkdtemp(join(tmpdir(), `tl-${name}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return openSessionDB(join(dir, "state.db"));
}

/** An adapter wired to a real GatewayRunner on a real store (see {@link adapterHarness}). */
export interface AdapterHarness<A extends Adapter> {
  db: SessionDB;
  logger: RecordingLogger;
  adapter: A;
  agent: ReplyAgent;
  /** Built, not started. */
  runner: GatewayRunner;
  /** `<platform>/<kind>` of every send that failed for good (the runner's `sendFailed` metric). */
  failures: string[];
  /** `<platform>/<reason>` of every delivery failure the adapter reported (the runner's `deliveryFailed` metric). */
  deliveryFailures: string[];
  /** Drains the runner (5 s at most) and stops it. */
  stopRunner(): Promise<void>;
  /** {@link AdapterHarness.stopRunner}, then closes the store. */
  stop(): Promise<void>;
}

/**
 * Makes the store (`db`, else a {@link tempDatabase} named `name`), a {@link recordingLogger},
 * the adapter (`create`, given both), a {@link ReplyAgent} (default answer: `You said: <text>`)
 * and a GatewayRunner over them. Nothing is started.
 */
export async function adapterHarness<A extends Adapter>(
  cleanups: Cleanups,
  options: {
    name: string;
    db?: SessionDB;
    answer?: ((input: AgentTurnInput) => string) | undefined;
    create: (parts: { db: SessionDB; logger: RecordingLogger }) => A | Promise<A>;
  },
): Promise<AdapterHarness<A>> {
  const db = options.db ?? (await tempDatabase(cleanups, options.name));
  const logger = recordingLogger();
  const failures: string[] = [];
  const deliveryFailures: string[] = [];
  const adapter = await options.create({ db, logger });
  const agent = new ReplyAgent(options.answer ?? ((input) => `You said: ${lastUserText(input)}`));
  const runner = new GatewayRunner({
    store: new SessionRouter({ db }),
    agentFactory: () => agent,
    adapters: [adapter],
    logger,
    // The platform's path alone: a long reply would fill the default 8K window and start a
    // compression (its notice, its child session), which session-compressor.test.ts covers.
    compression: { settings: { ...DEFAULT_COMPRESSION_SETTINGS, enabled: false } },
    metrics: {
      sendFailed: (platform, kind) => failures.push(`${platform}/${kind}`),
      deliveryFailed: (platform, reason) => deliveryFailures.push(`${platform}/${reason}`),
    },
  });
  const stopRunner = async (): Promise<void> => {
    await runner.drain(5_000);
    await runner.stop();
  };
  const stop = async (): Promise<void> => {
    await stopRunner();
    await db.close();
  };
  return { db, logger, adapter, agent, runner, failures, deliveryFailures, stopRunner, stop };
}

/**
 * For an adapter with webhook routes: mounts them on a new Fastify server, starts the runner,
 * then the server on a free loopback port; after the test the runner, the server and the
 * store are stopped, in that order. Resolves with the server and its base URL
 * (`http://127.0.0.1:<port>`).
 */
export async function serveWebhooks(
  cleanups: Cleanups,
  h: AdapterHarness<Adapter & { routes(http: FastifyInstance): void }>,
): Promise<{ http: FastifyInstance; url: string }> {
  const http = Fastify({ logger: false });
  h.adapter.routes(http);
  await h.runner.start();
  await http.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(async () => {
    await h.stopRunner();
    await http.close();
    await h.db.close();
  });
  return { http, url: `http://127.0.0.1:${(http.server.address() as AddressInfo).port}` };
}
