import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

const exists = (home: TempHome, id: string): Promise<boolean> => home.seed(async (db) => (await db.getSession(id)) !== null);

describe("threadline sessions delete", { timeout: 120_000 }, () => {
  it("asks on the terminal; 'y' deletes", async () => {
    const id = await t.seed((db) => addSession(db, { id: "del_me_1", text: "bye" }));
    const prompt = `Delete session '${id}' and all its messages? [y/N]`;
    const result = await t.runInTerminal(["sessions", "delete", "del_me", "--db", t.db], { waitFor: prompt, answer: "y" });
    expect(result.code).toBe(0);
    expect(result.output).toContain(`${prompt} `);
    expect(result.output).toContain(`Deleted session '${id}'.`);
    expect(await exists(t, id)).toBe(false);
  });

  it("asks on the terminal; 'n' (or just Enter) keeps the session", async () => {
    const id = await t.seed((db) => addSession(db, { id: "keep_me_1", text: "stay" }));
    const prompt = `Delete session '${id}' and all its messages? [y/N]`;
    const no = await t.runInTerminal(["sessions", "delete", id, "--db", t.db], { waitFor: prompt, answer: "n" });
    expect(no.code).toBe(0);
    expect(no.output).toContain("Cancelled; nothing was deleted.");
    const enter = await t.runInTerminal(["sessions", "delete", id, "--db", t.db], { waitFor: prompt, answer: "" });
    expect(enter.output).toContain("Cancelled; nothing was deleted.");
    expect(await exists(t, id)).toBe(true);
  });

  it("--yes deletes without asking (by title too)", async () => {
    const id = await t.seed((db) => addSession(db, { text: "named", title: "Old stuff" }));
    const result = await t.run(["sessions", "delete", "Old stuff", "--yes", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Deleted session '${id}' ("Old stuff").\n`);
    expect(result.stderr).toBe("");
    expect(await exists(t, id)).toBe(false);
  });

  it("refuses without a terminal and without --yes, without waiting for input", async () => {
    const id = await t.seed((db) => addSession(db, { text: "safe" }));
    // stdin is a pipe left open: a command that waited for an answer would hang here.
    const result = await t.run(["sessions", "delete", id, "--db", t.db], { keepStdinOpen: true, timeoutMs: 30_000 });
    expect(result.code).toBe(4);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`threadline: Refusing to delete session '${id}' without confirmation: stdin is not a terminal. Pass --yes to delete it.\n`);
    expect(await exists(t, id)).toBe(true);
  });

  it("--json reports the deletion; an unknown id exits 3", async () => {
    const id = await t.seed((db) => addSession(db, { text: "x" }));
    expect(parseJson(await t.run(["sessions", "delete", id, "--yes", "--json", "--db", t.db]))).toEqual({ id, deleted: true });
    const again = await t.run(["sessions", "delete", id, "--yes", "--db", t.db]);
    expect(again.code).toBe(3);
  });
});
