/**
 * `npx tsx bench/gateway/profile-top.ts <file.cpuprofile|dir> [--top N] [--last-ms MS] [--max-gap-ms MS] [--json]`: the top
 * self-time and total-time entries of V8 CPU profiles (as written by `bench:gateway
 * --cpu-prof DIR`), by function + script, and the self time grouped by owner: ours (a
 * `dist/` or `src/` file outside node_modules), node internals (`node:` scripts), each
 * node_modules package, and V8's own buckets ((garbage collector), (program), (idle)).
 *
 * Self time of a sample = the time to the next sample (`timeDeltas`), charged to the sampled
 * node. Total time of a function = every sample with that function anywhere on its stack,
 * counted once per sample (recursion is not double counted). Several profiles (a directory)
 * are summed. Prints a plain-text table on stdout, or one JSON object with `--json`.
 *
 * `--last-ms MS` keeps only the samples of each profile's last MS milliseconds (the last
 * phase of a run: `bench:gateway --conversations-only` ends with C = 100, whose seconds it
 * prints; the gateway's shutdown, a few ms, falls in it too). `--max-gap-ms MS` charges a
 * sample at most MS: on a loaded machine the process (or V8's sampling thread) is sometimes
 * descheduled for tens of ms, and the whole gap would otherwise go to whatever function
 * happened to be sampled before it (the sampling interval is ~1 ms; 5 is a fair cap).
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One row of a top list: a function (name + script + line) or an owner group. */
export interface TopEntry {
  name: string;
  group: string;
  ms: number;
  percent: number;
}

/** What profileTop computes. */
export interface ProfileTop {
  files: string[];
  sampledMs: number;
  /** Sampled time minus (idle). */
  busyMs: number;
  self: TopEntry[];
  total: TopEntry[];
  groups: TopEntry[];
}

const PACKAGE = /node_modules\/((?:@[^/]+\/)?[^/]+)\//u;

/** The owner of a script: `ours`, `node`, `npm:<package>`, or V8's bucket name. */
export function ownerOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName.startsWith("(")) return functionName;
    return "native";
  }
  const pkg = PACKAGE.exec(url);
  if (pkg !== null) return `npm:${pkg[1]}`;
  if (url.startsWith("node:")) return "node";
  if (/\/(dist|src)\//u.test(url)) return "ours";
  return "other";
}

function shortUrl(url: string): string {
  const pkg = url.lastIndexOf("node_modules/");
  if (pkg >= 0) return url.slice(pkg + "node_modules/".length);
  const ours = /\/(dist|src)\/(.*)$/u.exec(url);
  if (ours !== null) return `${ours[1]}/${ours[2]}`;
  return url;
}

function frameKey(frame: CallFrame): string {
  const name = frame.functionName === "" ? "(anonymous)" : frame.functionName;
  return frame.url === "" ? name : `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

function profileFiles(target: string): string[] {
  if (!statSync(target).isDirectory()) return [target];
  return readdirSync(target)
    .filter((name) => name.endsWith(".cpuprofile"))
    .sort()
    .map((name) => join(target, name));
}

/** Which samples {@link profileTop} counts, and how much at most each. */
export interface ProfileWindow {
  /** Only the samples of each profile's last this many ms (default: all). */
  lastMs?: number;
  /** A sample counts at most this many ms (default: its whole gap to the next sample). */
  maxGapMs?: number;
}

/** Reads the profiles and ranks their functions and owners. */
export function profileTop(target: string, top = 25, window: ProfileWindow = {}): ProfileTop {
  const fromEnd = window.lastMs === undefined ? Infinity : window.lastMs * 1000;
  const cap = window.maxGapMs === undefined ? Infinity : window.maxGapMs * 1000;
  const files = profileFiles(target);
  const self = new Map<string, { group: string; us: number }>();
  const total = new Map<string, { group: string; us: number }>();
  const groups = new Map<string, number>();
  let sampledUs = 0;
  let idleUs = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    // Sample i lasts until sample i + 1 (timeDeltas[i + 1]); the last one until endTime.
    let last = profile.startTime;
    const times = profile.timeDeltas.map((d) => (last += d));
    for (let i = 0; i < profile.samples.length; i++) {
      const next = i + 1 < times.length ? times[i + 1]! : profile.endTime;
      if (profile.endTime - times[i]! > fromEnd) continue;
      const us = Math.min(cap, Math.max(0, next - times[i]!));
      const leaf = byId.get(profile.samples[i]!);
      if (leaf === undefined) continue;
      sampledUs += us;
      const group = ownerOf(leaf.callFrame);
      if (group === "(idle)") idleUs += us;
      groups.set(group, (groups.get(group) ?? 0) + us);
      const key = frameKey(leaf.callFrame);
      const s = self.get(key) ?? { group, us: 0 };
      s.us += us;
      self.set(key, s);
      const seen = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const node = byId.get(id)!;
        const k = frameKey(node.callFrame);
        if (seen.has(k)) continue;
        seen.add(k);
        const t = total.get(k) ?? { group: ownerOf(node.callFrame), us: 0 };
        t.us += us;
        total.set(k, t);
      }
    }
  }
  const busyUs = sampledUs - idleUs;
  const rank = (entries: Iterable<[string, { group: string; us: number }]>, skip: (name: string) => boolean): TopEntry[] =>
    [...entries]
      .filter(([name]) => !skip(name))
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([name, v]) => ({ name, group: v.group, ms: Math.round(v.us / 100) / 10, percent: Math.round((v.us / busyUs) * 1000) / 10 }));
  // Roots and schedulers are on every stack: leave them out of the total list.
  const structural = (name: string): boolean =>
    /^\((root|program|idle|garbage collector)\)/u.test(name) || /^(processTicksAndRejections|runMicrotasks|listOnTimeout|processTimers) /u.test(name);
  return {
    files: files.map((f) => relative(process.cwd(), f)),
    sampledMs: Math.round(sampledUs / 100) / 10,
    busyMs: Math.round(busyUs / 100) / 10,
    self: rank(self, (name) => name === "(idle)"),
    total: rank(total, structural),
    groups: rank(
      [...groups].map(([g, us]) => [g, { group: g, us }] as [string, { group: string; us: number }]),
      (name) => name === "(idle)",
    ),
  };
}

function format(result: ProfileTop): string {
  const table = (title: string, rows: TopEntry[]): string =>
    [`${title}`, ...rows.map((r) => `  ${r.ms.toFixed(1).padStart(9)} ms ${r.percent.toFixed(1).padStart(5)} %  ${r.group.padEnd(22)} ${r.name}`)].join("\n");
  return [
    `${result.files.join(", ")}: ${result.sampledMs} ms sampled, ${result.busyMs} ms not idle (percentages are of that)`,
    table("self time by owner", result.groups),
    table("self time by function", result.self),
    table("total time by function (stack roots left out)", result.total),
  ].join("\n\n");
}

function main(argv: string[]): void {
  let target: string | undefined;
  let top = 25;
  let json = false;
  const window: ProfileWindow = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--top") top = Number(argv[++i]);
    else if (arg === "--last-ms") window.lastMs = Number(argv[++i]);
    else if (arg === "--max-gap-ms") window.maxGapMs = Number(argv[++i]);
    else if (arg === "--json") json = true;
    else target = arg;
  }
  const positive = (v: number | undefined): boolean => v === undefined || (Number.isFinite(v) && v > 0);
  if (target === undefined || !Number.isInteger(top) || top < 1 || !positive(window.lastMs) || !positive(window.maxGapMs)) {
    process.stderr.write("usage: npx tsx bench/gateway/profile-top.ts <file.cpuprofile|dir> [--top N] [--last-ms MS] [--max-gap-ms MS] [--json]\n");
    process.exit(2);
  }
  const result = profileTop(target, top, window);
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${format(result)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
