import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(`${root}package-lock.json`, "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
};

describe("the declared Node engine", () => {
  it("is one every installed package accepts (no EBADENGINE on npm install)", () => {
    const declared = pkg.engines.node;
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === "" || entry.engines === undefined || Array.isArray(entry.engines)) continue;
      const wanted = entry.engines.node;
      if (wanted === undefined) continue;
      if (!semver.subset(declared, wanted, { includePrerelease: false })) refusing.push(`${path} needs node ${wanted}`);
    }
    expect(refusing).toEqual([]);
  });
});
