/**
 * The load driver: a separate process (so the measuring process is not the gateway)
 * that talks to the gateway over loopback HTTP/1.1 with keep-alive connections. It takes
 * jobs from the orchestrator over its IPC channel and answers with the raw timings.
 * Protocol: DriverJob / DriverReply in protocol.ts.
 */
import { Agent, request, type IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";
import {
  benchText,
  type BurstJob,
  type BurstRecord,
  type BurstResult,
  type ConversationsJob,
  type ConversationsResult,
  type DriverJob,
  type DriverReply,
  type DriverResult,
  type RequestSample,
  type SessionsJob,
  type SessionsResult,
} from "./protocol.js";
import { telegramConversations, telegramFake } from "./telegram-driver.js";

interface Reply {
  status: number;
  /** The assistant text, or the error body. */
  text: string;
  sessionId: string | null;
  ms: number;
  /** When the request was issued, epoch ms. */
  issuedAtMs: number;
}

interface Sent {
  /** Resolves once the request has been written to the socket. */
  written: Promise<void>;
  reply: Promise<Reply>;
}

/** POSTs one chat message; times issue → last byte of the reply. */
function send(agent: Agent, base: URL, key: string, id: string): Sent {
  const body = JSON.stringify({ model: "threadline", messages: [{ role: "user", content: benchText(id) }] });
  let written!: () => void;
  const writtenP = new Promise<void>((resolve) => (written = resolve));
  const reply = new Promise<Reply>((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: "POST",
        path: "/v1/chat/completions",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-threadline-session-key": key,
          "x-bench-id": id,
        },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const ms = performance.now() - started;
          const raw = Buffer.concat(chunks).toString("utf8");
          let text = raw;
          if (res.statusCode === 200) {
            try {
              const parsed = JSON.parse(raw) as { choices?: { message?: { content?: string } }[] };
              text = parsed.choices?.[0]?.message?.content ?? "";
            } catch {
              text = `unparsable reply: ${raw.slice(0, 200)}`;
            }
          }
          const sid = res.headers["x-threadline-session-id"];
          resolve({ status: res.statusCode ?? 0, text, sessionId: typeof sid === "string" ? sid : null, ms, issuedAtMs: performance.timeOrigin + started });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.on("finish", () => written());
    req.end(body);
  });
  reply.catch(() => written());
  return { written: writtenP, reply };
}

const isEcho = (reply: Reply, id: string): boolean => reply.status === 200 && reply.text === `Echo: ${benchText(id)}`;

function describe(reply: Reply | Error, id: string): string {
  if (reply instanceof Error) return `${id}: ${reply.message}`;
  return `${id}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`;
}

async function conversations(job: ConversationsJob): Promise<ConversationsResult> {
  const bases = (job.urls ?? [job.url]).map((u) => new URL(u));
  const roundRobin = job.spread === "round-robin";
  // One pool; Node keeps its sockets per host:port, so each replica gets up to C of them.
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency });
  const samples: RequestSample[] = [];
  const errorExamples: string[] = [];
  let errors = 0;
  let attempted = 0;
  let cutShort = false;
  const started = performance.now();
  const deadline = job.deadlineMs === undefined ? Number.POSITIVE_INFINITY : started + job.deadlineMs;
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, c) => {
      const key = `${job.tag}-conv-${c}`;
      for (let t = 0; t < job.turns; t++) {
        if (performance.now() >= deadline) {
          cutShort = true;
          break;
        }
        attempted++;
        const id = `${job.tag}.${c}.${t}`;
        try {
          const base = bases[(roundRobin ? c + t : c) % bases.length]!;
          const reply = await send(agent, base, key, id).reply;
          const ok = isEcho(reply, id);
          samples.push({ id, clientMs: reply.ms, issuedAtMs: reply.issuedAtMs, ok });
          if (!ok) {
            errors++;
            if (errorExamples.length < 5) errorExamples.push(describe(reply, id));
          }
        } catch (error) {
          errors++;
          if (errorExamples.length < 5) errorExamples.push(describe(error as Error, id));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { kind: "conversations", seconds, attempted, cutShort, samples, errors, errorExamples };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function burst(job: BurstJob): Promise<BurstResult> {
  const base = new URL(job.url);
  const records: BurstRecord[] = [];
  for (let b = 0; b < job.bursts; b++) {
    // One connection per message, opened before the burst so every send goes out at once.
    const agent = new Agent({ keepAlive: true, maxSockets: job.size });
    await Promise.all(Array.from({ length: job.size }, () => fetchHealth(agent, base)));
    const key = `${job.tag}-burst-${b}`;
    const ids = Array.from({ length: job.size }, (_, k) => `${job.tag}.${b}.${k}`);
    const replies: Promise<Reply>[] = [];
    for (const id of ids) {
      const sent = send(agent, base, key, id);
      replies.push(sent.reply);
      await sent.written;
      if (job.gapMs > 0) await sleep(job.gapMs);
    }
    const settled = await Promise.allSettled(replies);
    records.push({
      key,
      ids,
      texts: ids.map(benchText),
      replies: settled.map((s) => (s.status === "fulfilled" && s.value.status === 200 ? s.value.text : null)),
      sessionIds: settled.map((s) => (s.status === "fulfilled" ? s.value.sessionId : null)),
    });
    agent.destroy();
  }
  return { kind: "burst", bursts: records };
}

function fetchHealth(agent: Agent, base: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, path: "/healthz" }, (res) => {
      res.resume();
      res.on("end", () => resolve());
    });
    req.on("error", reject);
    req.end();
  });
}

async function sessions(job: SessionsJob): Promise<SessionsResult> {
  const base = new URL(job.url);
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency });
  let next = 0;
  let ok = 0;
  let errors = 0;
  const errorExamples: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      for (let i = next++; i < job.sessions; i = next++) {
        const id = `${job.tag}.${i}`;
        try {
          const reply = await send(agent, base, `${job.tag}-s-${i}`, id).reply;
          if (isEcho(reply, id)) ok++;
          else {
            errors++;
            if (errorExamples.length < 5) errorExamples.push(describe(reply, id));
          }
        } catch (error) {
          errors++;
          if (errorExamples.length < 5) errorExamples.push(describe(error as Error, id));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { kind: "sessions", seconds, sent: job.sessions, ok, errors, errorExamples };
}

async function run(job: DriverJob): Promise<DriverResult> {
  switch (job.kind) {
    case "conversations":
      return job.platform === "telegram" ? telegramConversations(job) : conversations(job);
    case "burst":
      return burst(job);
    case "sessions":
      return sessions(job);
    case "telegram-fake":
      return telegramFake(job);
  }
}

if (typeof process.send !== "function") {
  process.stderr.write("driver.ts is started by bench/gateway/run.ts (it needs an IPC channel)\n");
  process.exit(2);
}
process.on("message", (job: DriverJob) => {
  run(job).then(
    (result) => process.send!({ ok: true, result } satisfies DriverReply),
    (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies DriverReply),
  );
});
