/**
 * docs/deploy.md shows the proxy examples verbatim: each shipped file (the nginx site, the
 * Caddyfile and the config.yaml each pairs with) is exactly one fenced block of the
 * "Behind a TLS proxy" section, so the page and the tested files cannot drift apart.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { codeBlocks } from "../docs/markdown-examples.js";

const SECTION = "Behind a TLS proxy (nginx, Caddy)";
const FILES: Array<[string, string]> = [
  ["deploy/nginx/threadline.conf", "nginx"],
  ["deploy/nginx/config.yaml", "yaml"],
  ["deploy/caddy/Caddyfile", "caddyfile"],
  ["deploy/caddy/config.yaml", "yaml"],
];

function repoPath(path: string): string {
  return fileURLToPath(new URL(`../../${path}`, import.meta.url));
}

describe("docs/deploy.md shows the proxy examples verbatim", () => {
  it.each(FILES)("%s is one block of the section, byte for byte", async (file, lang) => {
    const blocks = codeBlocks(await readFile(repoPath("docs/deploy.md"), "utf8")).filter((block) => block.section === SECTION);
    const content = (await readFile(repoPath(file), "utf8")).replace(/\n$/u, "");
    const same = blocks.filter((block) => block.code === content);
    expect(same.length, `${file} is not shown verbatim in docs/deploy.md's "${SECTION}" section (copy the file into its \`\`\`${lang} block)`).toBe(1);
    expect(same[0]!.lang).toBe(lang);
  });
});
