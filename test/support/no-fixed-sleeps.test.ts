/**
 * No fixed sleeps in tests: a test waits on an event, or polls a condition with a deadline
 * through test/support/wait-for.ts (`waitFor`, `withDeadline`). "Nothing happened" is shown
 * with a positive barrier (something later, ordered after it), never with a pause.
 *
 * This test scans every source file under test/ for timers and sleeps and fails naming
 * file:line for each one not on {@link ALLOWED}: the timers that are part of a fake's
 * behaviour (a fake server or agent that answers slowly on purpose, a long poll) or of the
 * wait helpers themselves. Tests never wait a fixed time for those: they wait for what the
 * fake's answer causes.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SELF = "test/support/no-fixed-sleeps.test.ts";

/** What counts as a timer or a sleep. */
const PATTERNS: Array<{ name: string; pattern: RegExp }> = [
  { name: "setTimeout", pattern: /\bsetTimeout\s*\(/u },
  { name: "setInterval", pattern: /\bsetInterval\s*\(/u },
  { name: "sleep()", pattern: /\bsleep\s*\(/u },
  { name: "delay()", pattern: /\bdelay\s*\(/u },
  { name: "waitForTimeout", pattern: /\bwaitForTimeout\s*\(/u },
  { name: "timers/promises", pattern: /["'](?:node:)?timers\/promises["']/u },
];

/** A line allowed to hold a timer: in `file`, containing `contains`, exactly `count` (default 1) such lines. */
interface Allowed {
  file: string;
  contains: string;
  count?: number;
  reason: string;
}

/** The only timers allowed under test/, each with its reason. */
const ALLOWED: Allowed[] = [
  // The wait helpers.
  {
    file: "test/support/wait-for.ts",
    contains: "setTimeout(resolve, interval)",
    reason: "waitFor: the pause between two probes of a condition polled with a deadline",
  },
  { file: "test/support/wait-for.ts", contains: "timer = setTimeout(() => {", reason: "withDeadline: the deadline of a wait for a promise" },
  {
    file: "test/adapters/chat/chat-pieces.test.ts",
    contains: 'setTimeout(() => resolve("timer"), 0)',
    reason: "abortableSleep's test: a zero-delay timer as the reference the sleep is raced against (which settles first), not a wait",
  },
  {
    file: "test/deploy/proxy-process.ts",
    contains: "req.setTimeout(0);",
    reason: "turns the request's idle timeout off once a streamed answer has begun (not a timer: the caller bounds the read with withDeadline)",
  },
  // Fakes that are slow on purpose, or hold a long poll.
  { file: "test/support/fake-openai-server.ts", contains: "function delay(", reason: "the fake provider's abortable pause, for scripted slow answers" },
  {
    file: "test/support/fake-openai-server.ts",
    contains: "await delay(wait, signal)",
    reason: "the fake provider answers after a scripted delayMs (timeouts, aborts, turns held mid-request)",
  },
  {
    file: "test/support/fake-openai-server.ts",
    contains: "await delay(tokenDelayMs, signal)",
    reason: "the fake provider streams tokens a scripted tokenDelayMs apart",
  },
  { file: "test/support/fake-openai-server.ts", contains: "const timer = setTimeout(() => {", reason: "the timer of that abortable pause" },
  {
    file: "test/fakes/signal/fake-signal-server.ts",
    contains: "setTimeout(done, Math.max(0, timeout) * 1000)",
    reason: "long poll: GET /v1/receive holds the request until a message comes or the client's timeout passes",
  },
  {
    file: "test/fakes/telegram/fake-telegram-server.ts",
    contains: "setTimeout(done, timeout * 1000)",
    reason: "long poll: getUpdates holds the request until an update comes or the client's timeout passes",
  },
  {
    file: "test/fakes/matrix/fake-matrix-homeserver.ts",
    contains: "setTimeout(resolve, timeout)",
    reason: "long poll: /sync holds the request until an event comes or the client's timeout passes",
  },
  {
    file: "test/serve/replicas-e2e.test.ts",
    contains: "setTimeout(r, 250)",
    reason: "the fake provider takes 250 ms per answer, so two replicas running one session at once would overlap at the model",
  },
  {
    file: "test/serve/serve-e2e.test.ts",
    contains: "setTimeout(resolve, 150)",
    reason: "the fake provider takes 150 ms per answer, so two turns of one session running at once would overlap at the model",
  },
  {
    file: "test/gateway/gateway-replicas.test.ts",
    contains: "setTimeout(r, delayMs)",
    reason: "the fake agent's turn takes 40 ms, so turns of one session on two replicas would overlap if both ran",
  },
  {
    file: "test/store/sqlite/lock-contention.test.ts",
    contains: `setTimeout(() => peer.exec("COMMIT"), 400)`,
    reason: "a peer holds SQLite's write lock for 400 ms, far past the busy timeout, so the store has to retry",
  },
  // Converted by the CLI-tests helper: remove these entries once that work is merged.
  {
    file: "test/cli/chat/terminal.ts",
    contains: "setTimeout(resolve, 40)",
    reason: "the poll interval of reading the tmux screen, inside a deadline (the pane has no change event)",
  },
  {
    file: "test/cli/cli-run.ts",
    contains: "timer = setTimeout(",
    count: 3,
    reason: "deadlines of a wait for output, of an in-process run and of a child process: each fails a hung run with its output; success clears it",
  },
  {
    file: "test/cli/sessions/cli-harness.ts",
    contains: "const timer = setTimeout(() => {",
    reason: "deadline of a run on a pseudo-terminal: kills and fails a hung run with its output; success clears it",
  },
];

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* sourceFiles(path);
    } else if (/\.(?:ts|mts|cts|tsx|js|mjs|cjs)$/u.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      yield path;
    }
  }
}

/** A line under test/ holding a timer or a sleep: `file:line`, the file, the text and what matched. */
interface TimerLine {
  where: string;
  file: string;
  text: string;
  what: string;
}

/** Every line under test/ holding a timer or a sleep. */
function timerLines(): TimerLine[] {
  const found: TimerLine[] = [];
  for (const path of sourceFiles(join(ROOT, "test"))) {
    const file = relative(ROOT, path).split(sep).join("/");
    if (file === SELF) continue;
    const lines = readFileSync(path, "utf8").split("\n");
    lines.forEach((text, i) => {
      const hit = PATTERNS.find(({ pattern }) => pattern.test(text));
      if (hit !== undefined) found.push({ where: `${file}:${i + 1}`, file, text: text.trim(), what: hit.name });
    });
  }
  return found;
}

it("no fixed sleeps under test/: timers only where ALLOWED says why", () => {
  const found = timerLines();
  const problems: string[] = [];
  for (const line of found) {
    if (!ALLOWED.some((a) => a.file === line.file && line.text.includes(a.contains))) {
      problems.push(
        `${line.where}: ${line.what} (${line.text}): a fixed sleep? Wait on the event, or poll the condition with waitFor from test/support/wait-for.ts; ` +
          `for "nothing happened", wait for something later that is ordered after it. A fake's own timer goes on ALLOWED in ${SELF}, with its reason.`,
      );
    }
  }
  for (const allowed of ALLOWED) {
    const matches = found.filter((line) => line.file === allowed.file && line.text.includes(allowed.contains));
    const count = allowed.count ?? 1;
    if (matches.length !== count) {
      problems.push(
        `${SELF}: the ALLOWED entry for ${allowed.file} ("${allowed.contains}") matches ${matches.length} line(s), not ${count}` +
          (matches.length === 0 ? ": the timer is gone, remove the entry." : `: ${matches.map((m) => m.where).join(", ")}; each timer needs its own reason.`),
      );
    }
  }
  expect(problems, problems.join("\n")).toEqual([]);
});

it("the scan sees timers: it flags a sleep written the usual ways", () => {
  const samples = [
    "await new Promise((resolve) => setTimeout(resolve, 300));",
    "await sleep(100);",
    "await delay(50);",
    "await page.waitForTimeout(200);",
    'import { setTimeout as pause } from "node:timers/promises";',
    "const timer = setInterval(tick, 10);",
  ];
  for (const sample of samples)
    expect(
      PATTERNS.some(({ pattern }) => pattern.test(sample)),
      sample,
    ).toBe(true);
  for (const fine of [
    "expect(config.beforeResetTimeoutSeconds).toBe(60);",
    "await abortableSleep(10, signal);",
    "const signal = AbortSignal.timeout(2_000);",
    "clearTimeout(timer);",
  ]) {
    expect(
      PATTERNS.some(({ pattern }) => pattern.test(fine)),
      fine,
    ).toBe(false);
  }
});
