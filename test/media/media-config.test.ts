import { describe, expect, it } from "vitest";
import { configFileProblems, parseServeConfig } from "../../src/serve/serve-config.js";
import { CONFIG_KEY_PATHS } from "../../src/serve/config-keys.js";
import { configFileDocument } from "../../src/serve/index.js";

describe("the media section of the serve config", () => {
  it("defaults to 20 MB, 4 images and 60 seconds", () => {
    expect(parseServeConfig({}).media).toEqual({ maxBytes: 20_971_520, maxImagesInContext: 4, downloadTimeoutSeconds: 60 });
  });

  it("takes maxBytes as a number of bytes or as a size", () => {
    expect(parseServeConfig({ media: { maxBytes: 1_000_000 } }).media.maxBytes).toBe(1_000_000);
    expect(parseServeConfig({ media: { maxBytes: "25MB", maxImagesInContext: 0, downloadTimeoutSeconds: 5 } }).media).toEqual({
      maxBytes: 25 * 1024 * 1024,
      maxImagesInContext: 0,
      downloadTimeoutSeconds: 5,
    });
  });

  it("names the key, what it must be and what it got", () => {
    expect(configFileProblems({ media: { maxBytes: "20 parsecs", maxImagesInContext: -1, downloadTimeoutSeconds: 0 } })).toEqual([
      'media.maxBytes: must be the largest attachment kept, in bytes (a whole number) or as a size such as "20MB" or "512KB", from 1 byte to 2 GB (default 20 MB) (got "20 parsecs")',
      "media.maxImagesInContext: must be a whole number of images from 0 (never send images to the model) to 100 (default 4) (got -1)",
      "media.downloadTimeoutSeconds: must be a number of seconds above 0 and at most 3600 (default 60) (got 0)",
    ]);
    expect(configFileProblems({ media: { maxBytes: "3GB" } })[0]).toMatch(/^media\.maxBytes: must be .* \(got "3GB"\)$/u);
    expect(configFileProblems({ media: { size: 1 } })).toEqual(['media: unknown key(s) "size"; allowed: maxBytes, maxImagesInContext, downloadTimeoutSeconds']);
    expect(configFileProblems({ media: { max_bytes: 1 } })).toEqual(['media.max_bytes: unknown key, did you mean "media.maxBytes"?']);
    expect(() => parseServeConfig({ media: { maxImagesInContext: 2.5 } })).toThrow("media.maxImagesInContext: must be a whole number");
  });

  it("is printed by config show in bytes, and reads back the same", () => {
    const config = parseServeConfig({ media: { maxBytes: "25MB", maxImagesInContext: 2 } });
    const file = configFileDocument(config);
    expect(file["media"]).toEqual({ maxBytes: 26_214_400, maxImagesInContext: 2, downloadTimeoutSeconds: 60 });
    expect(parseServeConfig(file).media).toEqual(config.media);
  });

  it("lists its keys among the config's key paths", () => {
    expect(CONFIG_KEY_PATHS).toEqual(expect.arrayContaining(["media.maxBytes", "media.maxImagesInContext", "media.downloadTimeoutSeconds"]));
  });
});
