import { describe, expect, it } from "vitest";
import { CliBenchUsageError, DEFAULT_DATASET, DEFAULT_ROUNDS, parseCliBenchArgs } from "../../bench/cli/args.js";
import { median, roundOrder, summarize, targetLabel, targetsMet } from "../../bench/cli/figures.js";

describe("bench:cli figures", () => {
  it("takes the middle value of an odd count and the mean of the middle two of an even count", () => {
    expect(median([30, 10, 20])).toBe(20);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("summarizes samples as median, minimum and the median's ratio to the baseline's", () => {
    expect(summarize([50, 40, 60])).toEqual({ median_ms: 50, min_ms: 40 });
    expect(summarize([130.04, 100.01, 160], 50)).toEqual({ median_ms: 130, min_ms: 100, ratio: 2.6 });
    expect(summarize([101], 33)).toEqual({ median_ms: 101, min_ms: 101, ratio: 3.06 });
  });

  it("rotates the order of the commands round by round", () => {
    const names = ["a", "b", "c"];
    expect(roundOrder(names, 0)).toEqual(["a", "b", "c"]);
    expect(roundOrder(names, 1)).toEqual(["b", "c", "a"]);
    expect(roundOrder(names, 4)).toEqual(["b", "c", "a"]);
    expect(roundOrder([], 3)).toEqual([]);
    expect(names).toEqual(["a", "b", "c"]);
  });

  it("checks the issue's targets: --version ≤ 2×, sessions list ≤ 3×, serve /healthz ≤ 500 ms", () => {
    const met = targetsMet({
      version: { median_ms: 100, min_ms: 90, ratio: 2 },
      sessions_list: { median_ms: 160, min_ms: 150, ratio: 3.2 },
      serve_healthz: { median_ms: 499, min_ms: 400, ratio: 10 },
    });
    expect(met).toEqual({ version: true, sessions_list: false, serve_healthz: true });
    expect(targetsMet({})).toEqual({ version: false, sessions_list: false, serve_healthz: false });
    expect(targetLabel("version")).toBe("≤ 2×");
    expect(targetLabel("serve_healthz")).toBe("≤ 500 ms");
    expect(targetLabel("help")).toBe("");
  });
});

describe("bench:cli arguments", () => {
  it("defaults to this checkout, 15 rounds and the medium dataset", () => {
    expect(parseCliBenchArgs([], "/here")).toEqual({ root: "/here", rounds: DEFAULT_ROUNDS, dataset: DEFAULT_DATASET });
    expect(DEFAULT_ROUNDS).toBe(15);
    expect(DEFAULT_DATASET).toBe("medium");
  });

  it("takes --root, --rounds and --dataset with a space or an equals sign", () => {
    expect(parseCliBenchArgs(["--root", "/ref", "--rounds=5", "--dataset", "small"], "/here")).toEqual({ root: "/ref", rounds: 5, dataset: "small" });
    expect(parseCliBenchArgs(["--root=/ref", "--rounds", "1", "--dataset=300"], "/here")).toEqual({ root: "/ref", rounds: 1, dataset: "300" });
  });

  it("refuses bad rounds, bad datasets, missing values, unknown options and positional arguments", () => {
    for (const argv of [["--rounds", "0"], ["--rounds", "2.5"], ["--rounds"], ["--dataset", "huge"], ["--root"], ["--root="], ["--quick"], ["medium"]]) {
      expect(() => parseCliBenchArgs(argv, "/here"), argv.join(" ")).toThrow(CliBenchUsageError);
    }
  });
});
