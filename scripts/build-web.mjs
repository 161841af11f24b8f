#!/usr/bin/env node
// Bundles the web page (src/web/, Preact + TSX) with esbuild into dist/web/ (run by
// `npm run build` after tsc). Output: index.html (pointing at assets/<name>),
// main-<hash>.js, main-<hash>.css and manifest.json ({ js, css }) that the server
// (src/http-api/ui/ui-routes.ts) reads to serve the hashed names under /ui/assets/ with
// immutable caching. Nothing is loaded from a CDN: every dependency is bundled.
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "dist", "web");

const result = await build({
  entryPoints: { main: join(root, "src/web/main.tsx") },
  bundle: true,
  write: false,
  format: "esm",
  target: ["es2022", "chrome110", "firefox110", "safari16"],
  minify: true,
  sourcemap: false,
  legalComments: "none",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: out,
  entryNames: "[name]",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});

const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const manifest = {};
for (const file of result.outputFiles) {
  const ext = file.path.endsWith(".css") ? "css" : file.path.endsWith(".js") ? "js" : null;
  if (ext === null) continue;
  const name = `main-${hash(file.contents)}.${ext}`;
  await writeFile(join(out, name), file.contents);
  manifest[ext] = name;
}
if (manifest.js === undefined || manifest.css === undefined) throw new Error("build-web: esbuild produced no JS or no CSS");
const html = (await readFile(join(root, "src/web/index.html"), "utf8"))
  .replaceAll("__MAIN_JS__", `assets/${manifest.js}`)
  .replaceAll("__MAIN_CSS__", `assets/${manifest.css}`);
await writeFile(join(out, "index.html"), html);
await writeFile(join(out, "manifest.json"), `${JSON.stringify(manifest)}\n`);
console.log(`build-web: dist/web/${manifest.js}, dist/web/${manifest.css}`);
