/**
 * A database holding one of everything `db copy` carries (sessions with tool calls, reasoning,
 * usage, titles, lineage, rewound messages and attachments; execution sessions; memory; pairing
 * approvals; identity aliases; routing entries; meta), seeded through the public API, and a
 * snapshot of all of it to compare two databases deeply.
 *
 * @module
 */
import type { ExecutionWrite, SessionDB } from "../../../src/index.js";
import { routeFields } from "../../contract/harness.js";
import { addToolSession } from "../sessions/fixtures.js";
import { addMediaSession, pngBytes } from "../sessions/media-fixtures.js";

/** The fixed base time of the seeded data (epoch seconds). */
export const T0 = 1_767_000_000;

/** Seeds every kind of durable data into `db`. */
export async function seedEverything(db: SessionDB): Promise<void> {
  const tools = await addToolSession(db, { id: "20260101_090000_t00l5e55" });
  await db.setTitle(tools, "Deploy staging");
  await db.recordUsage(tools, { inputTokens: 1200, outputTokens: 340, reasoningTokens: 55, apiCalls: 3, estimatedCostUsd: 0.0123, costStatus: "estimated" });
  await db.appendTurn(tools, [
    { role: "user", content: "and prod?", timestamp: T0 + 10 },
    {
      role: "assistant",
      content: "Not today.",
      reasoning: "prod is frozen",
      reasoningDetails: [{ type: "summary", text: "frozen" }],
      tokenCount: 9,
      finishReason: "stop",
      timestamp: T0 + 11,
    },
  ]);
  await db.rewind(tools); // hidden, but kept: the copy keeps rewound messages too
  await db.endSession(tools, "compression", { endedAt: T0 + 20 });
  const child = await db.createSession({
    id: "20260101_100000_c41d0000",
    source: "cli",
    parentSessionId: tools,
    startedAt: T0 + 20,
    model: "gpt-4o",
    modelConfig: { temperature: 0.2 },
  });
  await db.setTitle(child.id, "Deploy staging #2");
  await db.appendMessage(child.id, { role: "user", content: "continue", platformMessageId: "m-1", timestamp: T0 + 21 });

  // A child that started before its parent: the export gives it first, and the copy must still link them.
  const late = await db.createSession({ id: "20260101_103000_1a7e0000", source: "cli", startedAt: T0 + 100 });
  await db.createSession({ id: "20260101_101500_ea71e500", source: "cli", parentSessionId: late.id, startedAt: T0 - 50 });

  const shared = pngBytes(300_000); // more than one stored chunk
  const first = await addMediaSession(db, {
    id: "20260101_110000_0ed1a001",
    messages: [
      {
        text: "two pictures",
        attachments: [
          { bytes: shared, kind: "image", mimeType: "image/png", fileName: "a.png", caption: "first" },
          { bytes: pngBytes(500), kind: "image", mimeType: "image/png" },
        ],
      },
    ],
  });
  await db.endSession(first, "user_exit", { endedAt: T0 + 30 });
  await addMediaSession(db, {
    id: "20260101_120000_0ed1a002",
    source: "slack",
    messages: [{ attachments: [{ bytes: shared, kind: "image", mimeType: "image/png" }] }],
  });

  const chat = await db.writeRoute({
    key: "agent:main:telegram:dm:42",
    expectedVersion: null,
    route: routeFields("20260101_130000_40e7e000", T0 + 40, { origin: { platform: "telegram", chatId: "42" }, displayName: "Alice", lastPromptTokens: 77 }),
    createSession: {
      id: "20260101_130000_40e7e000",
      source: "telegram",
      sessionKey: "agent:main:telegram:dm:42",
      chatId: "42",
      chatType: "dm",
      startedAt: T0 + 40,
    },
    appendMessages: [{ role: "user", content: "hi from telegram", timestamp: T0 + 41 }],
  });
  await db.writeRoute({
    key: chat!.key,
    expectedVersion: chat!.version,
    route: { ...routeFields(chat!.sessionId, T0 + 40), updatedAt: T0 + 50, suspended: true },
  });

  const exec = (id: string, extra: Partial<ExecutionWrite> & Pick<ExecutionWrite, "kind" | "result">): ExecutionWrite => ({
    id,
    name: "researcher",
    baseId: "run-1",
    updatedAt: T0 + 60,
    messageCount: 2,
    agentsInvolved: null,
    ...extra,
  });
  await db.writeExecutions({
    put: [
      exec("run-1", {
        kind: "workflow",
        name: "pipeline",
        result: { steps: 2 },
        createdAt: T0 + 55,
        agentsInvolved: { "run-1-a": "researcher", "run-1-b": "writer" },
      }),
      exec("run-1-a", { kind: "agent", parentId: "run-1", result: { text: "found" } }),
      exec("run-1-b", { kind: "agent", name: "writer", parentId: "run-1", result: [1, 2, 3], updatedAt: T0 + 61 }),
      exec("solo", { kind: "agent", baseId: "solo", userId: "tenant-a", result: null, messageCount: 0 }),
    ],
  });

  await db.writeMemory({
    owner: { platform: "owner", userId: "owner" },
    kind: "memory",
    entries: ["likes tea", "ships on Fridays"],
    expectedVersion: null,
    now: 1_767_000_000_000,
  });
  const user = await db.writeMemory({
    owner: { platform: "telegram", userId: "42" },
    kind: "user",
    entries: ["Alice"],
    expectedVersion: null,
    now: 1_767_000_001_000,
  });
  await db.writeMemory({ owner: user!.owner, kind: "user", entries: ["Alice", "in Lisbon"], expectedVersion: user!.version, now: 1_767_000_002_000 });

  for (const [userId, by, at] of [
    ["42", "cli", 1_767_000_100_000],
    ["77", null, 1_767_000_200_000],
  ] as const) {
    const asked = await db.requestPairingCode("telegram", userId, { userName: `user ${userId}`, now: at - 5000 });
    if (asked.kind !== "code") throw new Error(`seed: pairing answered ${asked.kind}`);
    await db.approvePairingCode("telegram", asked.code, { by, now: at });
  }
  await db.recordAlias("whatsapp", "999999999999999", "15551234567");
  await db.recordAlias("whatsapp", "88888888888888888", "15551234567");
  await db.setMeta("home_channels", JSON.stringify({ telegram: { chatId: "42" } }));
  await db.setMeta("adapter_state:telegram:offset", "1234");
}

/** Everything durable of a database, in a form two databases can be compared in (store versions left out: a copy starts them at 1). */
export async function snapshot(db: SessionDB): Promise<Record<string, unknown>> {
  const sessions: unknown[] = [];
  for await (const record of db.exportSessions({ includeRewound: true, media: "inline" })) {
    const s = await db.getSession(record.session.id);
    sessions.push({ record, derived: { messageCount: s?.messageCount, toolCallCount: s?.toolCallCount, lastActiveAt: s?.lastActiveAt, preview: s?.preview } });
  }
  const executions: unknown[] = [];
  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await db.listExecutions({ limit: 100, cursor });
    for (const e of page.items) {
      const { version: _v, ...record } = (await db.getExecution(e.id))!;
      executions.push(record);
    }
    cursor = page.nextCursor;
  }
  const memories = (await db.listMemories({ limit: 200 })).items.map(({ version: _v, ...m }) => m);
  const routes = (await db.listRoutes({ limit: 1000 })).items.map(({ version: _v, ...r }) => r);
  const aliases = (await db.listAliasEntries({ limit: 1000 })).items;
  const meta = (await db.listMeta({ limit: 1000 })).items;
  const approved = (await db.listPairing()).approved;
  const media = await db.checkMedia({ verify: true });
  return { sessions, executions, memories, routes, aliases, meta, approved, media };
}
