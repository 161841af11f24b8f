// Loaded with `node --import` (through NODE_OPTIONS) by test/serve/lazy-sdk.test.ts:
// registers a module-resolution hook that appends every chat platform SDK a process
// resolves (grammy, discord.js, @slack/*, matrix-js-sdk and its matrix-*/@matrix-org/* packages, ws, which the Signal adapter loads, and the MCP SDK) to the file named by THREADLINE_TEST_SDK_LOG.
import { register } from "node:module";

register(new URL("./sdk-load-resolve.mjs", import.meta.url), { data: { log: process.env.THREADLINE_TEST_SDK_LOG ?? null } });
