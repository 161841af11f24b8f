/**
 * `threadline memory show | edit | clear [--user] [--for P:ID]` as an operator runs them, on
 * SQLite and PostgreSQL: the owner by default, a person by `--for` (alias-resolved), text and
 * `--json`, `$EDITOR` editing with the limits checked before anything is written (exit 2),
 * `clear` asking unless `--yes` (exit 4 without a terminal), usage errors (exit 2).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";
import { PAIRING_BACKENDS, type PairingBackend } from "../pairing/pairing-backends.js";

const OWNER = { platform: "owner", userId: "owner" };
const ANN = { platform: "telegram", userId: "42" };

/** A scripted $EDITOR: records what it was shown in SEEN, then writes NEW (or exits with CODE). */
function editorScript(dir: string): string {
  const file = join(dir, "editor.mjs");
  writeFileSync(
    file,
    `import { readFileSync, writeFileSync } from "node:fs";
const target = process.argv[2];
writeFileSync(process.env.SEEN, readFileSync(target, "utf8"));
if (process.env.CODE) process.exit(Number(process.env.CODE));
if (process.env.BUMP_DB) {
  // The agent saves to the same memory while the editor is open.
  const { openSessionDB } = await import(${JSON.stringify(new URL("../../../dist/index.js", import.meta.url).href)});
  const db = await openSessionDB(process.env.BUMP_DB);
  const owner = { platform: "owner", userId: "owner" };
  const current = await db.getMemory(owner, "user");
  await db.writeMemory({ owner, kind: "user", entries: [...(current?.entries ?? []), "saved by the agent meanwhile"], expectedVersion: current?.version ?? null });
  await db.close();
}
writeFileSync(target, readFileSync(process.env.NEW, "utf8"));
`,
  );
  return `"${process.execPath}" "${file}"`;
}

for (const backend of PAIRING_BACKENDS) {
  describe(`threadline memory (${backend.name})`, { timeout: 120_000 }, () => {
    let t: TempHome;
    let b: PairingBackend;
    let scratch: string;
    let editor: string;

    beforeEach(async () => {
      t = makeTempHome();
      b = await backend.open(t);
      scratch = mkdtempSync(join(tmpdir(), "tl-memory-cli-"));
      editor = editorScript(scratch);
    });
    afterEach(async () => {
      await b.close();
      t.cleanup();
      rmSync(scratch, { recursive: true, force: true });
    });

    const run = (args: string[], options: { input?: string; env?: Record<string, string | undefined> } = {}) =>
      t.run(["memory", ...args, "--db", b.target], options);
    /** `memory edit` with the scripted editor writing `text`; resolves the run and what the editor was shown. */
    async function edit(args: string[], text: string, code?: number, bump = false) {
      const seen = join(scratch, "seen.txt");
      const next = join(scratch, "new.txt");
      writeFileSync(next, text);
      const result = await run(["edit", ...args], {
        env: {
          EDITOR: editor,
          VISUAL: undefined,
          SEEN: seen,
          NEW: next,
          CODE: code === undefined ? undefined : String(code),
          BUMP_DB: bump ? b.target : undefined,
        },
      });
      return { ...result, shown: readFileSync(seen, "utf8") };
    }

    it("show: the owner's MEMORY by default, USER with --user, a person with --for (their canonical id); text and --json", async () => {
      const empty = await run(["show"]);
      expect(empty.code, empty.stderr).toBe(0);
      expect(empty.stdout).toBe("No MEMORY memory saved for the owner yet (limit 2,200 chars).\n");
      await b.db.writeMemory({
        owner: OWNER,
        kind: "memory",
        entries: ["Deploys go out on Tuesdays", "Prefers\ttabs\nand short answers"],
        expectedVersion: null,
      });
      await b.db.writeMemory({ owner: ANN, kind: "user", entries: ["Ann \u202eevil", "Has a cat"], expectedVersion: null });
      const shown = await run(["show"]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/^MEMORY memory of the owner · 59\/2,200 chars · 2 entries · updated /u);
      expect(shown.stdout.split("\n").slice(1).join("\n")).toBe("Deploys go out on Tuesdays\n§\nPrefers    tabs\nand short answers\n");
      const user = await run(["show", "--user", "--for", "telegram:42"]);
      expect(user.stdout).toContain("USER memory of telegram:42 · ");
      expect(user.stdout).toContain("Ann ?evil\n§\nHas a cat\n");
      // An alias of Ann's id finds her memory.
      await b.db.recordAlias("telegram", "42", "42-alt");
      const json = await run(["show", "--user", "--for", "telegram:42-alt", "--json"]);
      expect(json.code, json.stderr).toBe(0);
      expect(parseJson(json)).toMatchObject({ owner: ANN, kind: "user", entries: ["Ann \u202eevil", "Has a cat"], chars: 21, limit: 1375, version: 1 });
      const none = parseJson(await run(["show", "--for", "slack:U1", "--json"]));
      expect(none).toEqual({ owner: { platform: "slack", userId: "U1" }, kind: "memory", entries: [], chars: 0, limit: 2200, updatedAt: null, version: null });
      const bad = await run(["show", "--for", "telegram"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--for must be <platform>:<userId>/u);
    });

    it("edit: $EDITOR gets the entries separated by § lines; what it writes is saved; over the limit nothing is written (exit 2)", async () => {
      const first = await edit(["--user"], "Likes tea\n§\n  Lives in Oslo  \n\n§\n\n");
      expect(first.code, first.stderr).toBe(0);
      expect(first.shown).toBe("");
      expect(first.stdout).toBe("Saved the USER memory of the owner: 25/1,375 chars, 2 entries.\n");
      expect(first.stderr).toContain("Editing the USER memory of the owner (limit 1,375 chars)");
      expect((await b.db.getMemory(OWNER, "user"))?.entries).toEqual(["Likes tea", "Lives in Oslo"]);

      const same = await edit(["--user"], "Likes tea\n§\nLives in Oslo\n");
      expect(same.shown).toBe("Likes tea\n§\nLives in Oslo\n");
      expect(same.stdout).toBe("No changes; nothing was saved.\n");

      const tooLong = await edit(["--user"], `Likes tea\n§\n${"x".repeat(1370)}\n`);
      expect(tooLong.code).toBe(2);
      expect(tooLong.stderr).toMatch(/would be 1,382 characters; the limit is 1,375/u);
      expect(tooLong.stdout).toBe("");
      const bad = await edit(["--user"], "ok\u0007bell\n");
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/control characters/u);
      const quit = await edit(["--user"], "ignored", 1);
      expect(quit.code).toBe(4);
      expect(quit.stderr).toMatch(/editor exited with code 1; nothing was saved/u);
      expect(await b.db.getMemory(OWNER, "user")).toMatchObject({ entries: ["Likes tea", "Lives in Oslo"], version: 1 });

      // The agent saved while the editor was open: the edit is not written over it (exit 4).
      const raced = await edit(["--user"], "Likes coffee now\n", undefined, true);
      expect(raced.code).toBe(4);
      expect(raced.stderr).toMatch(/changed while you were editing \(the agent saved to it\); nothing was saved\. Run "threadline memory edit" again/u);
      expect(await b.db.getMemory(OWNER, "user")).toMatchObject({ entries: ["Likes tea", "Lives in Oslo", "saved by the agent meanwhile"], version: 2 });

      const json = await edit(["--for", "telegram:42", "--json"], "Ann's notes\n");
      expect(parseJson(json)).toMatchObject({ owner: ANN, kind: "memory", entries: ["Ann's notes"], chars: 11, version: 1, changed: true });
    });

    it("clear: refuses without a terminal unless --yes (exit 4), then deletes one kind of one person", async () => {
      await b.db.writeMemory({ owner: OWNER, kind: "memory", entries: ["a"], expectedVersion: null });
      await b.db.writeMemory({ owner: OWNER, kind: "user", entries: ["b"], expectedVersion: null });
      await b.db.writeMemory({ owner: ANN, kind: "user", entries: ["c"], expectedVersion: null });
      const refused = await run(["clear", "--user"]);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(/Refusing to clear the USER memory of the owner without confirmation: stdin is not a terminal\. Pass --yes/u);
      expect(await b.db.getMemory(OWNER, "user")).not.toBeNull();
      const cleared = await run(["clear", "--user", "--yes"]);
      expect(cleared.code, cleared.stderr).toBe(0);
      expect(cleared.stdout).toBe("Cleared the USER memory of the owner.\n");
      expect(await b.db.getMemory(OWNER, "user")).toBeNull();
      expect(await b.db.getMemory(OWNER, "memory")).not.toBeNull();
      expect(await b.db.getMemory(ANN, "user")).not.toBeNull();
      expect(parseJson(await run(["clear", "--user", "--yes", "--json"]))).toEqual({ owner: OWNER, kind: "user", cleared: false });
      expect(parseJson(await run(["clear", "--user", "--for", "telegram:42", "--yes", "--json"]))).toEqual({ owner: ANN, kind: "user", cleared: true });
    });
  });
}

describe("threadline memory on a terminal", { timeout: 120_000 }, () => {
  it("clear asks, and only y clears", async () => {
    const t = makeTempHome();
    try {
      await t.seed((db) => db.writeMemory({ owner: OWNER, kind: "memory", entries: ["keep me"], expectedVersion: null }));
      const no = await t.runInTerminal(["memory", "clear", "--db", t.db], { waitFor: "[y/N]", answer: "n" });
      expect(no.output).toContain("Clear the MEMORY memory of the owner (1 entry)? [y/N]");
      expect(no.output).toContain("Cancelled; nothing was cleared.");
      await t.seed(async (db) => expect(await db.getMemory(OWNER, "memory")).not.toBeNull());
      const yes = await t.runInTerminal(["memory", "clear", "--db", t.db], { waitFor: "[y/N]", answer: "y" });
      expect(yes.code).toBe(0);
      await t.seed(async (db) => expect(await db.getMemory(OWNER, "memory")).toBeNull());
    } finally {
      t.cleanup();
    }
  });
});
