/**
 * Contract: session titles: sanitising, length, uniqueness, lineage variants `t #N`.
 *
 * @module
 */

import { expect } from "vitest";
import { ConflictError, InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** [input, stored title] */
const SANITISER_TABLE: Array<[string, string]> = [
  ["Plain title", "Plain title"],
  ["  Hello   World  ", "Hello World"],
  ["Tab\there", "Tab here"],
  ["New\nline", "New line"],
  ["CR\r\nLF", "CR LF"],
  ["lone\rCR", "lone CR"],
  ["\t\n lead and trail \r\n", "lead and trail"],
  ["Bell\u0007ring", "Bellring"],
  ["Null\u0000byte", "Nullbyte"],
  ["Esc\u001b[31mred", "Esc[31mred"],
  ["Unit\u001fsep\u0001x", "Unitsepx"],
  ["Del\u007fete", "Delete"],
  ["zero\u200Bwidth", "zerowidth"],
  ["\u200Cnj\u200Dj\u200E\u200F", "njj"],
  ["line\u2028sep\u2029par", "lineseppar"],
  ["\u202Aembed\u202B\u202C", "embed"],
  ["\u202Eevil\u202D", "evil"],
  ["word\u2060joiner", "wordjoiner"],
  ["\u2066iso\u2067late\u2068d\u2069", "isolated"],
  ["\u2061\u2062\u2063\u2064\u2065fn", "fn"],
  ["\uFEFFbom", "bom"],
  ["a \u200B b", "a b"],
  ["a\u0007 \u0007b", "a b"],
  ["café ☕ 日本語 Ünïcödé", "café ☕ 日本語 Ünïcödé"],
  ["keep\u2010hyphen \u2027dot \u2030mille \u205Edots", "keep\u2010hyphen \u2027dot \u2030mille \u205Edots"],
  ["Project #2", "Project #2"],
];

export function titlesTests(init: SessionDBTestInitializer): void {
  contractArea(init, "titles", (test, { db }) => {
    test("setTitle stores the title; getTitle and getSession return it", async () => {
      await db().createSession({ id: "s", source: "cli" });
      expect(await db().getTitle("s")).toBeNull();
      expect(await db().setTitle("s", "My chat")).toBe("My chat");
      expect(await db().getTitle("s")).toBe("My chat");
      expect((await db().getSession("s"))?.title).toBe("My chat");
      expect(await db().setTitle("s", "Renamed")).toBe("Renamed");
      expect(await db().getTitle("s")).toBe("Renamed");
    });

    test("the sanitiser table", async () => {
      await db().createSession({ id: "s", source: "cli" });
      for (const [input, expected] of SANITISER_TABLE) {
        const stored = await db().setTitle("s", input);
        expect(stored, `setTitle(${JSON.stringify(input)})`).toBe(expected);
        expect(await db().getTitle("s"), `getTitle after ${JSON.stringify(input)}`).toBe(expected);
      }
    });

    test("a title given at creation is sanitised too", async () => {
      const created = await db().createSession({ id: "s", source: "cli", title: "  Made\u200B at\n creation " });
      expect(created.title).toBe("Made at creation");
      expect(await db().getTitle("s")).toBe("Made at creation");
    });

    test("null, empty and sanitises-to-empty titles clear the title", async () => {
      await db().createSession({ id: "s", source: "cli" });
      for (const empty of [null, "", "   ", "\u200B\uFEFF", " \n\t\r ", "\u0007\u202E"]) {
        await db().setTitle("s", "Something");
        expect(await db().setTitle("s", empty), `setTitle(${JSON.stringify(empty)})`).toBeNull();
        expect(await db().getTitle("s")).toBeNull();
        expect((await db().getSession("s"))?.title).toBeNull();
      }
    });

    test("100 code points are fine, 101 is an InvalidInputError and keeps the old title", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const hundred = "a".repeat(100);
      expect(await db().setTitle("s", hundred)).toBe(hundred);
      const emoji = "😀".repeat(100); // 200 UTF-16 code units, 100 code points
      expect(await db().setTitle("s", emoji)).toBe(emoji);
      const cjk = "題".repeat(100); // 300 UTF-8 bytes
      expect(await db().setTitle("s", cjk)).toBe(cjk);
      // Length counts after sanitising.
      expect(await db().setTitle("s", `   ${"b".repeat(50)}\u200B\u200B${"b".repeat(50)}   `)).toBe("b".repeat(100));

      await expectReject(() => db().setTitle("s", "a".repeat(101)), InvalidInputError, /title/i);
      await expectReject(() => db().setTitle("s", "😀".repeat(101)), InvalidInputError, /title/i);
      expect(await db().getTitle("s")).toBe("b".repeat(100));
      await expectReject(() => db().setTitle("s", "x".repeat(5000)), InvalidInputError);
      await expectReject(() => db().createSession({ id: "t", source: "cli", title: "a".repeat(101) }), InvalidInputError);
      expect(await db().getSession("t")).toBeNull();
    });

    test("a title held by another session is a ConflictError naming the holder", async () => {
      await db().createSession({ id: "holder-session", source: "cli" });
      await db().createSession({ id: "s2", source: "cli" });
      await db().setTitle("holder-session", "Shared");
      const err = await expectReject(() => db().setTitle("s2", "Shared"), ConflictError);
      expect(err.message).toContain("holder-session");
      expect(err.sessionId).toBe("holder-session");
      // Uniqueness applies to the sanitised title.
      const again = await expectReject(() => db().setTitle("s2", "  Shared\u200B "), ConflictError);
      expect(again.message).toContain("holder-session");
      expect(await db().getTitle("s2")).toBeNull();
      expect(await db().getTitle("holder-session")).toBe("Shared");
      // A title lookup in between (same statement text inside a backend) changes nothing.
      expect(await db().resolveByTitle("Shared")).toBe("holder-session");
      const afterLookup = await expectReject(() => db().setTitle("s2", "Shared"), ConflictError);
      expect(afterLookup.message).toContain("holder-session");
      expect(afterLookup.sessionId).toBe("holder-session");
      // Creating a session with a held title is a conflict too, and creates nothing.
      await expectReject(() => db().createSession({ id: "s3", source: "cli", title: "Shared" }), ConflictError);
      expect(await db().getSession("s3")).toBeNull();
    });

    test("uniqueness is exact: case and lineage suffixes make different titles", async () => {
      await db().createSession({ id: "a", source: "cli" });
      await db().createSession({ id: "b", source: "cli" });
      await db().createSession({ id: "c", source: "cli" });
      await db().setTitle("a", "Shared");
      expect(await db().setTitle("b", "shared")).toBe("shared");
      expect(await db().setTitle("c", "Shared #2")).toBe("Shared #2");
      // Re-setting your own title is not a conflict.
      expect(await db().setTitle("a", "Shared")).toBe("Shared");
    });

    test("a cleared or deleted holder frees the title", async () => {
      await db().createSession({ id: "a", source: "cli" });
      await db().createSession({ id: "b", source: "cli" });
      await db().createSession({ id: "c", source: "cli" });
      await db().setTitle("a", "Free me");
      await db().setTitle("a", null);
      expect(await db().setTitle("b", "Free me")).toBe("Free me");
      await db().deleteSession("b");
      expect(await db().setTitle("c", "Free me")).toBe("Free me");
    });

    test("a title moves from a compression ancestor to its continuation", async () => {
      await db().createSession({ id: "root", source: "cli", title: "Long task", startedAt: 1 });
      await db().endSession("root", "compression", { endedAt: 2 });
      await db().createSession({ id: "mid", source: "cli", parentSessionId: "root", startedAt: 2 });
      expect(await db().setTitle("mid", "Long task")).toBe("Long task");
      expect(await db().getTitle("mid")).toBe("Long task");
      expect(await db().getTitle("root")).toBeNull();

      // Also from further up a compression chain.
      await db().setTitle("mid", "Chain title");
      await db().setTitle("root", "Root title");
      await db().endSession("mid", "compression", { endedAt: 3 });
      await db().createSession({ id: "tip", source: "cli", parentSessionId: "mid", startedAt: 3 });
      expect(await db().setTitle("tip", "Root title")).toBe("Root title");
      expect(await db().getTitle("root")).toBeNull();
      expect(await db().resolveByTitle("Root title")).toBe("tip");
    });

    test("a title does not move from a parent that did not end by compression, nor from a sibling", async () => {
      await db().createSession({ id: "p1", source: "cli", title: "Branch source" });
      await db().createSession({ id: "c1", source: "cli", parentSessionId: "p1" });
      await expectReject(() => db().setTitle("c1", "Branch source"), ConflictError, /p1/);

      await db().createSession({ id: "p2", source: "cli", title: "Exited" });
      await db().endSession("p2", "user_exit");
      await db().createSession({ id: "c2", source: "cli", parentSessionId: "p2" });
      await expectReject(() => db().setTitle("c2", "Exited"), ConflictError, /p2/);

      await db().createSession({ id: "p3", source: "cli" });
      await db().endSession("p3", "compression");
      await db().createSession({ id: "sib1", source: "cli", parentSessionId: "p3", title: "Sibling" });
      await db().createSession({ id: "sib2", source: "cli", parentSessionId: "p3" });
      await expectReject(() => db().setTitle("sib2", "Sibling"), ConflictError, /sib1/);

      // Nor from a continuation back to its compression ancestor.
      await db().createSession({ id: "p4", source: "cli" });
      await db().endSession("p4", "compression");
      await db().createSession({ id: "c4", source: "cli", parentSessionId: "p4", title: "Child owns" });
      await expectReject(() => db().setTitle("p4", "Child owns"), ConflictError, /c4/);

      expect(await db().getTitle("p1")).toBe("Branch source");
      expect(await db().getTitle("p2")).toBe("Exited");
      expect(await db().getTitle("sib1")).toBe("Sibling");
      expect(await db().getTitle("c4")).toBe("Child owns");
    });

    test("resolveByTitle takes the session holding exactly the title, never another member of its lineage", async () => {
      const make = async (id: string, title: string) => {
        await db().createSession({ id, source: "cli" });
        await db().setTitle(id, title);
      };
      await make("base", "proj");
      expect(await db().resolveByTitle("proj")).toBe("base");
      await make("v2", "proj #2");
      await make("v3", "proj #3");
      await make("v10", "proj #10");
      expect(await db().resolveByTitle("proj")).toBe("base");
      expect(await db().resolveByTitle("proj #2")).toBe("v2");
      expect(await db().resolveByTitle("proj #10")).toBe("v10");
      expect(await db().resolveByTitle("  proj\u200B ")).toBe("base"); // sanitised like a stored title
      expect(await db().resolveByTitle("nothing here")).toBeNull();
      expect(await db().resolveByTitle("pro")).toBeNull();
      expect(await db().resolveByTitle("PROJ")).toBeNull();
      expect(await db().resolveByTitle("x".repeat(500))).toBeNull();
    });

    test("resolveByTitle does not stand a variant in for a title nobody holds", async () => {
      await db().createSession({ id: "v4", source: "cli", title: "orphan line #4" });
      expect(await db().resolveByTitle("orphan line")).toBeNull();
      expect(await db().resolveByTitle("orphan line #4")).toBe("v4");
    });

    test("similarTitles lists the lineage variants and collision forms of a title, newest first, without its holder", async () => {
      const make = async (id: string, title: string, startedAt: number) => {
        await db().createSession({ id, source: "cli", startedAt });
        await db().setTitle(id, title);
      };
      await make("a", "my project", 1);
      await make("b", "my project #2", 2);
      await make("c", "my project (2)", 3);
      await make("d", "my project #3", 4);
      await make("e", "my projects", 5);
      await make("f", "My project #4", 6);
      expect(await db().similarTitles("my project")).toEqual([
        { id: "d", title: "my project #3" },
        { id: "c", title: "my project (2)" },
        { id: "b", title: "my project #2" },
      ]);
      expect((await db().similarTitles("my project #2")).map((s) => s.id)).toEqual(["d", "c", "a"]);
      expect((await db().similarTitles("my project (2)")).map((s) => s.id)).toEqual(["d", "b", "a"]);
      expect((await db().similarTitles("my project", 2)).map((s) => s.id)).toEqual(["d", "c"]);
      // A title nobody holds still has its look-alikes.
      expect((await db().similarTitles("my project #9")).map((s) => s.id)).toEqual(["d", "c", "b", "a"]);
      expect(await db().similarTitles("unrelated")).toEqual([]);
      expect(await db().similarTitles("")).toEqual([]);
    });

    test("freeTitle: the title when free, else the first free collision form `t (N)`, never a lineage number", async () => {
      const make = async (id: string, title: string) => {
        await db().createSession({ id, source: "cli" });
        await db().setTitle(id, title);
      };
      expect(await db().freeTitle("Hello there")).toBe("Hello there");
      await make("h1", "Hello there");
      expect(await db().freeTitle("Hello there")).toBe("Hello there (2)");
      await make("h2", await db().freeTitle("Hello there"));
      expect(await db().getTitle("h2")).toBe("Hello there (2)");
      expect(await db().freeTitle("Hello there")).toBe("Hello there (3)");
      // Asking for a taken collision form gives the next one of the same base, not "t (2) (2)".
      expect(await db().freeTitle("Hello there (2)")).toBe("Hello there (3)");
      // Lineage titles of the base do not count as collision forms.
      await make("l2", "Hello there #2");
      expect(await db().freeTitle("Hello there")).toBe("Hello there (3)");
      // A gap is reused.
      await make("h4", "Hello there (4)");
      expect(await db().freeTitle("Hello there")).toBe("Hello there (3)");
      // The result stays within the limit: the base is cut at a whole character.
      const long = "界".repeat(100);
      await make("long", long);
      const free = await db().freeTitle(long);
      expect(free).toBe(`${"界".repeat(96)} (2)`);
      expect([...free].length).toBe(100);
      await expectReject(() => db().freeTitle("   "), InvalidInputError);
    });

    test("only ` #<digits>` is a lineage suffix", async () => {
      const make = async (id: string, title: string) => {
        await db().createSession({ id, source: "cli" });
        await db().setTitle(id, title);
      };
      await make("foo", "Foo");
      await make("foo-bar", "Foo #bar");
      await make("foo-nospace", "Foo#5");
      await make("foo-extra", "Foo #6 extra");
      await make("foo-case", "foo #7");
      await make("foo-hash", "Foo #");
      await make("foo-mixed", "Foo #8a");
      expect(await db().resolveByTitle("Foo")).toBe("foo");
      expect(await db().nextTitleInLineage("Foo")).toBe("Foo #2");
      expect(await db().resolveByTitle("Foo #bar")).toBe("foo-bar");
    });

    test("lineage matching treats LIKE/GLOB wildcards literally", async () => {
      const make = async (id: string, title: string) => {
        await db().createSession({ id, source: "cli" });
        await db().setTitle(id, title);
      };
      await make("underscore", "a_b");
      await make("lookalike", "axb #2");
      await make("percent", "100% done");
      await make("percent-like", "100X done #3");
      await make("star", "a*");
      await make("star-like", "ab #9");
      expect(await db().resolveByTitle("a_b")).toBe("underscore");
      expect(await db().resolveByTitle("100% done")).toBe("percent");
      expect(await db().resolveByTitle("a*")).toBe("star");
      expect(await db().nextTitleInLineage("a_b")).toBe("a_b #2");
      expect(await db().nextTitleInLineage("100% done")).toBe("100% done #2");
    });

    test("nextTitleInLineage", async () => {
      const make = async (id: string, title: string) => {
        await db().createSession({ id, source: "cli" });
        await db().setTitle(id, title);
      };
      expect(await db().nextTitleInLineage("fresh")).toBe("fresh");
      await make("p1", "proj");
      expect(await db().nextTitleInLineage("proj")).toBe("proj #2");
      await make("p2", "proj #2");
      expect(await db().nextTitleInLineage("proj")).toBe("proj #3");
      expect(await db().nextTitleInLineage("proj #2")).toBe("proj #3");
      await make("p9", "proj #9");
      expect(await db().nextTitleInLineage("proj")).toBe("proj #10");

      await make("m1", "my project");
      await make("m2", "my project #2");
      expect(await db().nextTitleInLineage("my project #2")).toBe("my project #3");

      // Only numbered variants held: the next number after the highest.
      await make("o4", "other #4");
      expect(await db().nextTitleInLineage("other")).toBe("other #5");

      // Nothing of the lineage held: the base itself.
      expect(await db().nextTitleInLineage("unused #7")).toBe("unused");
      // The suggestion is free to take.
      await make("n", await db().nextTitleInLineage("proj"));
      expect(await db().getTitle("n")).toBe("proj #10");
    });

    test("setTitle of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().setTitle("ghost", "x"), NotFoundError);
    });
  });
}
