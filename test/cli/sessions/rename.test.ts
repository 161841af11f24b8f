import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

describe("threadline sessions rename", { timeout: 120_000 }, () => {
  it("joins the words into the title", async () => {
    const id = await t.seed((db) => addSession(db, { id: "ren_1", text: "x" }));
    const result = await t.run(["sessions", "rename", "ren", "Quarterly", "report", "draft", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Session '${id}' is now titled "Quarterly report draft".\n`);
    expect(await t.seed(async (db) => db.getTitle(id))).toBe("Quarterly report draft");
  });

  it("a title another session holds is refused plainly (exit 4)", async () => {
    const [holder, other] = await t.seed(async (db) => [await addSession(db, { text: "a", title: "Taken" }), await addSession(db, { text: "b" })]);
    const result = await t.run(["sessions", "rename", other!, "Taken", "--db", t.db]);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^threadline: The title "Taken" is already used by session /u);
    expect(result.stderr).toContain(holder!);
    expect(await t.seed(async (db) => db.getTitle(other!))).toBeNull();
  });

  it("--json prints the stored (sanitised) title; an empty title clears it", async () => {
    const id = await t.seed((db) => addSession(db, { text: "x", title: "Before" }));
    expect(parseJson(await t.run(["sessions", "rename", id, "  After ", " now", "--json", "--db", t.db]))).toEqual({ id, title: "After now" });
    const cleared = await t.run(["sessions", "rename", id, "", "--db", t.db]);
    expect(cleared.stdout).toBe(`Session '${id}' no longer has a title.\n`);
  });
});
