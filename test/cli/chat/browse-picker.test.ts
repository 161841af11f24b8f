import { beforeAll, describe, expect, it } from "vitest";
import {
  applyKey,
  decodeKeys,
  filterSessions,
  matchesFilter,
  renderPicker,
  visibleRowsFor,
  type PickerKey,
  type PickerState,
} from "../../../src/cli/commands/sessions/session-picker.js";
import { loadDisplayWidth } from "../../../src/cli/display-width.js";
import type { SessionSummary } from "../../../src/store/index.js";
import { ZERO_USAGE } from "../../contract/harness.js";

const NOW = 2_000_000_000;

function summary(id: string, title: string | null, preview: string | null, source = "cli"): SessionSummary {
  return {
    id,
    source,
    title,
    preview,
    model: null,
    startedAt: NOW - 3600,
    lastActiveAt: NOW - 60,
    endedAt: null,
    endReason: null,
    messageCount: 2,
    parentSessionId: null,
    usage: { ...ZERO_USAGE },
  };
}

const sessions = [
  summary("20260314_101500_a1b2c3", "Deploy plan", "how do we ship the release"),
  summary("20260313_090000_0a1b2c3d", null, "weather in Lisbon", "telegram"),
  summary("20260312_080000_ffeedd", "Recipes", "a soup for tonight"),
];

function press(keys: PickerKey[], state: PickerState = { filter: "", selected: 0, scroll: 0 }, rows = 10) {
  let current = state;
  let action: ReturnType<typeof applyKey>["action"] = { kind: "none" };
  for (const key of keys) {
    ({ state: current, action } = applyKey(current, key, sessions, rows));
    if (action.kind !== "none") break;
  }
  return { state: current, action };
}

describe("decodeKeys", () => {
  it("reads text, arrows, Enter, Backspace, a lone Esc and Ctrl-C", () => {
    expect(decodeKeys("ab")).toEqual([{ name: "text", text: "ab" }]);
    expect(decodeKeys("\u001b[A\u001b[B\u001bOA\r")).toEqual([{ name: "up" }, { name: "down" }, { name: "up" }, { name: "enter" }]);
    expect(decodeKeys("\u007f")).toEqual([{ name: "backspace" }]);
    expect(decodeKeys("\u001b")).toEqual([{ name: "escape" }]);
    expect(decodeKeys("\u001b\u001b")).toEqual([{ name: "escape" }, { name: "escape" }]);
    expect(decodeKeys("\u0003")).toEqual([{ name: "interrupt" }]);
    expect(decodeKeys("\u001b[5~\u001b[6~")).toEqual([{ name: "pageUp" }, { name: "pageDown" }]);
  });

  it("skips unknown escape sequences", () => {
    expect(decodeKeys("\u001b[1;5Cx")).toEqual([{ name: "text", text: "x" }]);
  });
});

describe("filtering", () => {
  it("matches title, preview, id and source, case-insensitively, every word", () => {
    expect(matchesFilter(sessions[0]!, "deploy")).toBe(true);
    expect(matchesFilter(sessions[0]!, "RELEASE")).toBe(true);
    expect(matchesFilter(sessions[0]!, "a1b2c3")).toBe(true);
    expect(matchesFilter(sessions[1]!, "telegram lisbon")).toBe(true);
    expect(matchesFilter(sessions[1]!, "telegram paris")).toBe(false);
    expect(filterSessions(sessions, "cli").map((s) => s.title)).toEqual(["Deploy plan", "Recipes"]);
    expect(filterSessions(sessions, "   ")).toHaveLength(3);
  });
});

describe("applyKey", () => {
  it("types into the filter and resets the selection", () => {
    const { state } = press([{ name: "down" }, { name: "text", text: "so" }]);
    expect(state).toEqual({ filter: "so", selected: 0, scroll: 0 });
  });

  it("moves within the filtered rows and stops at the ends", () => {
    expect(press([{ name: "down" }, { name: "down" }, { name: "down" }]).state.selected).toBe(2);
    expect(press([{ name: "up" }]).state.selected).toBe(0);
    expect(press([{ name: "end" }]).state.selected).toBe(2);
    expect(press([{ name: "end" }, { name: "home" }]).state.selected).toBe(0);
  });

  it("Enter picks the selected filtered session", () => {
    expect(press([{ name: "text", text: "cli" }, { name: "down" }, { name: "enter" }]).action).toEqual({ kind: "pick", id: "20260312_080000_ffeedd" });
    expect(press([{ name: "enter" }]).action).toEqual({ kind: "pick", id: "20260314_101500_a1b2c3" });
  });

  it("Enter with nothing matching does nothing", () => {
    expect(press([{ name: "text", text: "zzz" }, { name: "enter" }]).action).toEqual({ kind: "none" });
  });

  it("Esc clears the filter first, then leaves; Ctrl-C leaves at once", () => {
    const cleared = press([{ name: "text", text: "soup" }, { name: "escape" }]);
    expect(cleared.action).toEqual({ kind: "none" });
    expect(cleared.state.filter).toBe("");
    expect(press([{ name: "escape" }], cleared.state).action).toEqual({ kind: "exit" });
    expect(press([{ name: "text", text: "x" }, { name: "interrupt" }]).action).toEqual({ kind: "exit" });
  });

  it("Backspace and Ctrl-U edit the filter", () => {
    expect(press([{ name: "text", text: "soup" }, { name: "backspace" }]).state.filter).toBe("sou");
    expect(press([{ name: "text", text: "soup" }, { name: "clear" }]).state.filter).toBe("");
  });

  it("scrolls to keep the selection on screen", () => {
    const { state } = press([{ name: "down" }, { name: "down" }], undefined, 1);
    expect(state).toEqual({ filter: "", selected: 2, scroll: 2 });
    expect(press([{ name: "up" }], state, 1).state).toEqual({ filter: "", selected: 1, scroll: 1 });
    expect(press([{ name: "pageUp" }], state, 2).state.selected).toBe(0);
  });
});

describe("renderPicker", () => {
  beforeAll(loadDisplayWidth);
  it("shows the filter, the matching rows with the selection marked, and the count", () => {
    const screen = renderPicker({ filter: "cli", selected: 1, scroll: 0 }, sessions, { width: 120, height: 20, now: NOW, color: false });
    const lines = screen.split("\n");
    expect(lines[1]).toBe("Filter: cli");
    expect(lines.some((l) => l.startsWith("  Deploy plan") && l.includes("20260314_101500_a1b2c3"))).toBe(true);
    expect(lines.some((l) => l.startsWith("> Recipes") && l.includes("1m ago") && l.includes("cli"))).toBe(true);
    expect(screen).not.toContain("Lisbon");
    expect(lines.at(-1)).toBe("2 of 3 sessions");
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(120);
  });

  it("says when nothing matches", () => {
    const screen = renderPicker({ filter: "zzz", selected: 0, scroll: 0 }, sessions, { width: 80, height: 20, now: NOW, color: false });
    expect(screen).toContain('No session matches "zzz".');
    expect(screen.split("\n").at(-1)).toBe("0 of 3 sessions");
  });

  it("shows only the rows that fit", () => {
    const screen = renderPicker({ filter: "", selected: 2, scroll: 2 }, sessions, { width: 100, height: visibleRowsFor(1) + 5, now: NOW, color: false });
    expect(screen).toContain("Recipes");
    expect(screen).not.toContain("Deploy plan");
  });
});
