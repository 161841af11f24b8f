/**
 * Where the time of a V8 CPU profile (`node --cpu-prof`) went: self time per package (a
 * node_modules package, `node:` internals, a dist/ folder, or V8's own: compile, GC), total
 * (inclusive) time per package, and self time per function.
 *
 *   npx tsx bench/serve-start/profile-summary.ts <file.cpuprofile> [--top 20]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, ...rest] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: profile-summary.ts <file.cpuprofile> [--top N]");
const top = rest[0] === "--top" ? Number(rest[1]) : 20;
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const shortUrl = (url: string): string => url.replace(/^.*node_modules\//u, "nm/").replace(/^file:\/\/.*?\/dist\//u, "dist/");
function packageOf(url: string): string {
  if (url === "") return "(V8: compile, GC, native)";
  if (url.startsWith("node:")) return "node: internals";
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/u.exec(url);
  if (module !== null) return `nm/${module[1]}`;
  const dist = /\/dist\/([^/]+)/u.exec(url);
  return dist !== null ? `dist/${dist[1]}` : shortUrl(url);
}

const self = new Map<number, number>();
let totalUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i + 1] ?? 0;
  self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + delta);
  totalUs += delta;
}
const add = (map: Map<string, number>, key: string, us: number): void => void map.set(key, (map.get(key) ?? 0) + us);
const packageSelf = new Map<string, number>();
const packageTotal = new Map<string, number>();
const functionSelf = new Map<string, number>();
for (const [id, us] of self) {
  const { callFrame } = byId.get(id)!;
  add(packageSelf, packageOf(callFrame.url), us);
  add(functionSelf, `${callFrame.functionName || "(anonymous)"} ${shortUrl(callFrame.url)}:${callFrame.lineNumber}`, us);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const url = byId.get(at)!.callFrame.url;
    if (url === "") continue;
    const name = packageOf(url);
    if (!seen.has(name)) add(packageTotal, name, us);
    seen.add(name);
  }
}
const list = (title: string, map: Map<string, number>): string =>
  `${title}\n${[...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`)
    .join("\n")}`;
console.log(`sampled ${(totalUs / 1000).toFixed(0)} ms`);
console.log(list("self time by package:", packageSelf));
console.log(list("total time by package (with what it calls):", packageTotal));
console.log(list("self time by function:", functionSelf));
