import { describe, expect, it } from "vitest";
import { CompareUsageError, parseCompareArgs } from "../../bench/compare-args.js";

describe("bench:compare arguments", () => {
  it("keeps the store, gateway and context modes: each checkout runs its own script", () => {
    expect(parseCompareArgs(["748b06e", "medium", "--db", "postgres://x/test", "--rounds", "3"])).toEqual({
      ref: "748b06e",
      rounds: 3,
      bench: { script: "bench/run.ts", args: ["medium", "--db", "postgres://x/test"], runs: "own", needsBuild: false },
    });
    expect(parseCompareArgs(["HEAD~1", "gateway", "--quick"]).bench).toEqual({
      script: "bench/gateway/run.ts",
      args: ["--quick"],
      runs: "own",
      needsBuild: true,
    });
    expect(parseCompareArgs(["HEAD~1", "context"])).toEqual({
      ref: "HEAD~1",
      rounds: 2,
      bench: { script: "bench/context/run.ts", args: [], runs: "own", needsBuild: false },
    });
  });

  it("runs this checkout's bench:cli against both builds in cli mode; --rounds is compare's", () => {
    expect(parseCompareArgs(["748b06e", "cli", "--rounds", "5", "--dataset", "small"])).toEqual({
      ref: "748b06e",
      rounds: 5,
      bench: { script: "bench/cli/run.ts", args: ["--dataset", "small"], runs: "root", needsBuild: true },
    });
  });

  it("passes everything after a second -- to the benchmark, --rounds included", () => {
    const parsed = parseCompareArgs(["748b06e", "cli", "--rounds", "3", "--", "--rounds", "10"]);
    expect(parsed.rounds).toBe(3);
    expect(parsed.bench.args).toEqual(["--rounds", "10"]);
  });

  it("runs any script of this checkout in script mode, with its arguments", () => {
    expect(parseCompareArgs(["748b06e", "script", "bench/pg-concurrency/run.ts", "--sessions", "1,10", "--rounds", "1"])).toEqual({
      ref: "748b06e",
      rounds: 1,
      bench: { script: "bench/pg-concurrency/run.ts", args: ["--sessions", "1,10"], runs: "root", needsBuild: true },
    });
  });

  it("refuses a missing ref, a missing mode, a bad --rounds, script without a path, and a --root of its own", () => {
    for (const argv of [
      [],
      ["--rounds", "2"],
      ["748b06e"],
      ["748b06e", "cli", "--rounds", "0"],
      ["748b06e", "script"],
      ["748b06e", "script", "--x"],
      ["748b06e", "script", "b.ts", "--root", "/x"],
    ]) {
      expect(() => parseCompareArgs(argv), JSON.stringify(argv)).toThrow(CompareUsageError);
    }
  });
});
