/**
 * The JSON Schemas of the HTTP API: request parameters and bodies, and the response
 * records. Fastify validates requests and serialises responses with them, and
 * `/openapi.json` publishes them (each named schema once, under `components.schemas`).
 *
 * Conventions: query parameters are snake_case (`agent_name`, `after_id`); JSON bodies and
 * responses are camelCase, exactly as the library returns them; times are epoch seconds.
 *
 * @module
 */

/** A JSON Schema (draft 2020-12 subset that both Ajv and OpenAPI 3.1 read). */
export type JsonSchema = Record<string, unknown>;

/** Named schemas: `/openapi.json` lists each under `components.schemas` and refers to it by `$ref`. */
export const NAMED_SCHEMAS = new Map<JsonSchema, string>();

function named<T extends JsonSchema>(name: string, schema: T): T {
  NAMED_SCHEMAS.set(schema, name);
  return schema;
}

const nullable = (type: string): JsonSchema => ({ type: [type, "null"] });
const str = { type: "string" } as const;
const num = { type: "number" } as const;
const int = { type: "integer" } as const;
/** Any JSON value. */
const anyJson: JsonSchema = {};

/** A session or execution id in a path. */
export const idParams: JsonSchema = {
  type: "object",
  required: ["id"],
  additionalProperties: false,
  properties: { id: { type: "string", minLength: 1, maxLength: 256, description: "The id (exact)." } },
};

/** An execution id in a path: exact id, unique prefix or base id. */
export const executionIdParams: JsonSchema = {
  type: "object",
  required: ["id"],
  additionalProperties: false,
  properties: {
    id: { type: "string", minLength: 1, maxLength: 256, description: "Exact id, a unique id prefix, or a base id." },
  },
};

/** Token and cost totals of a session (`SessionUsage`). */
export const usageSchema = named("SessionUsage", {
  type: "object",
  properties: {
    inputTokens: num,
    outputTokens: num,
    cacheReadTokens: num,
    cacheWriteTokens: num,
    reasoningTokens: num,
    apiCalls: num,
    estimatedCostUsd: num,
    actualCostUsd: nullable("number"),
    billingProvider: nullable("string"),
    billingMode: nullable("string"),
    costStatus: nullable("string"),
  },
});

/** A session's metadata (`Session`). */
export const sessionSchema = named("Session", {
  type: "object",
  properties: {
    id: str,
    source: str,
    userId: nullable("string"),
    model: nullable("string"),
    modelConfig: { type: ["object", "null"], additionalProperties: true },
    systemPrompt: nullable("string"),
    parentSessionId: nullable("string"),
    startedAt: num,
    endedAt: nullable("number"),
    endReason: nullable("string"),
    title: nullable("string"),
    sessionKey: nullable("string"),
    chatId: nullable("string"),
    chatType: nullable("string"),
    threadId: nullable("string"),
    messageCount: int,
    toolCallCount: int,
    lastActiveAt: num,
    preview: nullable("string"),
    usage: usageSchema,
  },
});

/** One row of a session listing (`SessionSummary`). */
export const sessionSummarySchema = named("SessionSummary", {
  type: "object",
  properties: {
    id: str,
    source: str,
    title: nullable("string"),
    preview: nullable("string"),
    model: nullable("string"),
    startedAt: num,
    lastActiveAt: num,
    endedAt: nullable("number"),
    endReason: nullable("string"),
    messageCount: int,
    parentSessionId: nullable("string"),
    usage: usageSchema,
  },
});

/** A page of the session listing with its keyset cursor. */
export const sessionPageSchema = named("SessionPage", {
  type: "object",
  properties: {
    items: { type: "array", items: sessionSummarySchema },
    nextCursor: { ...nullable("string"), description: "Pass as `cursor` for the next page; null on the last page." },
  },
});

const roleSchema = { type: "string", enum: ["system", "developer", "user", "assistant", "tool"] };

/** A stored message (`Message`). */
export const messageSchema = named("Message", {
  type: "object",
  properties: {
    id: int,
    sessionId: str,
    role: roleSchema,
    content: {
      ...anyJson,
      description:
        'A string, an array of content parts, or null. An attachment is a part { "type": "attachment", "attachment": { sha256, kind, mimeType, size, fileName, caption, voice, meta } }: GET /sessions/{id}/attachments/{sha256} serves its bytes.',
    },
    toolCalls: { type: ["array", "null"], items: { type: "object", additionalProperties: true } },
    toolCallId: nullable("string"),
    toolName: nullable("string"),
    tokenCount: nullable("number"),
    finishReason: nullable("string"),
    reasoning: nullable("string"),
    reasoningDetails: anyJson,
    platformMessageId: nullable("string"),
    timestamp: num,
    rewoundAt: nullable("number"),
  },
});

/** A page of a session's messages. */
export const messagePageSchema = named("MessagePage", {
  type: "object",
  properties: {
    items: { type: "array", items: messageSchema },
    nextAfterId: { ...nullable("integer"), description: "Pass as `after_id` for the next page; null when there are no more messages." },
  },
});

/** The reply of `PUT /sessions/{id}/title`. */
export const titleSchema = named("SessionTitle", {
  type: "object",
  properties: { id: str, title: nullable("string") },
});

/** The body of a rename: `{ title }`. */
export const titleBody: JsonSchema = {
  type: "object",
  required: ["title"],
  additionalProperties: false,
  properties: {
    title: { type: ["string", "null"], description: "The new title (at most 100 code points after sanitising); null or empty clears it." },
  },
};

const contextMessageSchema = named("ContextMessage", {
  type: "object",
  properties: { id: int, role: roleSchema, content: str, timestamp: num },
});

/** One search hit (`SearchHit`). */
export const searchHitSchema = named("SearchHit", {
  type: "object",
  properties: {
    messageId: int,
    sessionId: str,
    role: roleSchema,
    snippet: { type: "string", description: "An excerpt with every match wrapped in `>>>` and `<<<`." },
    timestamp: num,
    toolName: nullable("string"),
    source: str,
    model: nullable("string"),
    sessionStartedAt: num,
    context: {
      type: "object",
      properties: {
        before: { anyOf: [contextMessageSchema, { type: "null" }] },
        after: { anyOf: [contextMessageSchema, { type: "null" }] },
      },
    },
  },
});

/** A piece of a snippet: plain text, or a match to highlight (`match: true`). */
export const snippetSegmentSchema = named("SnippetSegment", {
  type: "object",
  properties: { text: str, match: { type: "boolean" } },
});

/** A search hit with its snippet as segments (`GET /search`). */
export const searchHitWithSegmentsSchema = named("SearchHitWithSegments", {
  type: "object",
  properties: {
    ...(searchHitSchema.properties as Record<string, JsonSchema>),
    segments: {
      type: "array",
      items: snippetSegmentSchema,
      description: "The snippet split at the match markers: render `text` as plain text, highlighting the segments with match true.",
    },
  },
});

/** The hits of one session, in the order of its first hit. */
export const searchSessionGroupSchema = named("SearchSessionGroup", {
  type: "object",
  properties: {
    sessionId: str,
    title: nullable("string"),
    source: str,
    model: nullable("string"),
    sessionStartedAt: num,
    messageIds: { type: "array", items: int, description: "The hits of this session (messageId), in result order." },
  },
});

/** The reply of `GET /search`. */
export const searchResultSchema = named("SearchResult", {
  type: "object",
  properties: {
    items: { type: "array", items: searchHitWithSegmentsSchema },
    sessions: {
      type: "array",
      items: searchSessionGroupSchema,
      description: "The hits of this page grouped by session, in order of each session's first hit.",
    },
    limit: int,
    offset: int,
  },
});

/** A session in a lineage tree. */
export const lineageNodeSchema = named("LineageNode", {
  type: "object",
  properties: {
    id: str,
    parentSessionId: { ...nullable("string"), description: "The parent node (null for the root)." },
    relation: {
      type: "string",
      enum: ["root", "continuation", "child"],
      description: "continuation: the parent ended with reason compression; child: a branch, handoff or sub-run.",
    },
    title: nullable("string"),
    source: str,
    model: nullable("string"),
    startedAt: num,
    endedAt: nullable("number"),
    endReason: nullable("string"),
    messageCount: int,
  },
});

/** The reply of `GET /sessions/{id}/lineage`. */
export const lineageSchema = named("Lineage", {
  type: "object",
  properties: {
    sessionId: { type: "string", description: "The session asked about." },
    rootId: str,
    nodes: { type: "array", items: lineageNodeSchema, description: "Root first, then descendants breadth first." },
    truncated: { type: "boolean" },
  },
});

const briefSessionSchema = {
  type: "object",
  properties: { id: str, title: nullable("string"), source: str, messageCount: int },
};

/** The reply of `GET /sessions/{id}/delete-preview`. */
export const deletePreviewSchema = named("DeletePreview", {
  type: "object",
  properties: {
    session: briefSessionSchema,
    removes: { type: "object", properties: { sessions: int, messages: { ...int, description: "Visible messages (rewound ones go too)." } } },
    detaches: { type: "array", items: briefSessionSchema, description: "Direct children that are kept but detached (they become roots)." },
    detachedOthers: { ...int, description: "Children of other tenants that are detached too (counted, not named)." },
  },
});

const usageTotalsProperties = {
  sessions: int,
  messages: int,
  toolCalls: int,
  inputTokens: num,
  outputTokens: num,
  cacheReadTokens: num,
  cacheWriteTokens: num,
  reasoningTokens: num,
  apiCalls: num,
  estimatedCostUsd: num,
  actualCostUsd: num,
};

/** The reply of `GET /stats/usage`. */
export const usageStatsSchema = named("UsageStats", {
  type: "object",
  properties: {
    since: num,
    until: nullable("number"),
    timeZone: { type: "string", description: "The server's time zone: the one days are counted in." },
    totals: { type: "object", properties: usageTotalsProperties },
    byDay: {
      type: "array",
      items: { type: "object", properties: { day: { type: "string", description: "YYYY-MM-DD" }, source: str, sessions: int, messages: int } },
    },
    byModel: { type: "array", items: { type: "object", properties: { model: nullable("string"), ...usageTotalsProperties } } },
    bySource: { type: "array", items: { type: "object", properties: { source: str, ...usageTotalsProperties } } },
    databaseBytes: { ...nullable("number"), description: "Bytes on disk (at most a minute old); null for a scoped key." },
  },
});

/** Database totals (`StoreStats`). */
export const statsSchema = named("StoreStats", {
  type: "object",
  properties: {
    totalSessions: int,
    totalMessages: int,
    sessionsBySource: { type: "object", additionalProperties: { type: "integer" } },
    byModel: {
      type: "array",
      items: {
        type: "object",
        properties: {
          model: nullable("string"),
          sessions: int,
          inputTokens: num,
          outputTokens: num,
          cacheReadTokens: num,
          cacheWriteTokens: num,
          reasoningTokens: num,
          estimatedCostUsd: num,
          actualCostUsd: num,
        },
      },
    },
    databaseBytes: num,
    searchIndexBytes: nullable("number"),
  },
});

/** One line of an export (`application/x-ndjson`): see `SessionRecord` in docs/api.md. */
export const sessionRecordSchema = named("SessionRecord", {
  type: "object",
  description: 'One exported session (one JSON line): { format: "threadline.session", version: 1, session, messages }.',
  properties: {
    format: { type: "string", const: "threadline.session" },
    version: { type: "integer", const: 1 },
    session: { type: "object", additionalProperties: true },
    messages: { type: "array", items: { type: "object", additionalProperties: true } },
  },
});

/** An execution run's metadata (`ExecutionMetadata`). */
export const executionMetadataSchema = named("ExecutionMetadata", {
  type: "object",
  properties: {
    id: str,
    kind: { type: "string", enum: ["agent", "workflow"] },
    name: str,
    baseId: str,
    parentId: nullable("string"),
    userId: nullable("string"),
    createdAt: num,
    updatedAt: num,
    messageCount: int,
    agentsInvolved: { type: ["object", "null"], additionalProperties: { type: "string" }, description: "Step session id → agent name." },
  },
});

/** An execution run with its stored result (`ExecutionSession`). */
export const executionSessionSchema = named("ExecutionSession", {
  type: "object",
  properties: {
    ...(executionMetadataSchema.properties as Record<string, JsonSchema>),
    result: { ...anyJson, description: "The stored result (status, final response, messages, steps or nodes, error)." },
  },
});

/** A page of the execution listing with the total. */
export const executionPageSchema = named("ExecutionPage", {
  type: "object",
  properties: {
    items: { type: "array", items: executionMetadataSchema },
    total: { type: "integer", description: "How many sessions match the filters in all." },
    limit: int,
    offset: int,
  },
});

/** The body of `POST /execution/history/cleanup`. */
export const cleanupBody: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    olderThanDays: { type: "number", minimum: 0, description: "Units not updated for more than this many days go (default 30; 0: every unit)." },
    maxSessions: { type: "integer", minimum: 0, description: "Keep at most this many units, the newest (default 50)." },
  },
};

/** What a cleanup removed (`CleanupReport`). */
export const cleanupReportSchema = named("CleanupReport", {
  type: "object",
  properties: {
    removedUnits: { type: "integer", description: "Units removed (a workflow with its steps is one)." },
    removedSessions: { type: "integer", description: "Sessions removed, every step counted." },
    removedIds: { type: "array", items: str },
  },
});

/** The body of `POST /execution/history/{id}/messages`: the message. */
export const executionMessageBody: JsonSchema = {
  type: "object",
  required: ["role"],
  additionalProperties: true,
  description: "The message to append, e.g. { role, content }; any JSON fields are kept.",
  properties: { role: { type: "string", minLength: 1 }, content: anyJson },
};

/** The one error shape of every failed request. */
export const errorSchema = named("Error", {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "A stable code, e.g. TL_ERR_NOT_FOUND (docs/http.md lists them)." },
        message: { type: "string" },
        details: { type: "object", additionalProperties: true, description: "Code-specific details: field, candidates, requestId…" },
      },
    },
  },
});

/** A pending pairing code (`PairingRequest`; times here in epoch seconds, like every time of this API). */
export const pairingRequestSchema = named("PairingRequest", {
  type: "object",
  required: ["platform", "code", "userId", "userName", "chatId", "createdAt", "expiresAt"],
  properties: {
    platform: str,
    code: { ...str, description: "The code the stranger was given (a secret for its hour: never log it)." },
    userId: str,
    userName: { ...nullable("string"), description: "As the platform gave it: untrusted text, render it as text." },
    chatId: nullable("string"),
    createdAt: { ...num, description: "Epoch seconds." },
    expiresAt: { ...num, description: "Epoch seconds: the code is refused from then on." },
  },
});

/** A person approved to talk to the agent on a platform (`PairingApproval`). */
export const pairingApprovalSchema = named("PairingApproval", {
  type: "object",
  required: ["platform", "userId", "userName", "approvedAt", "approvedBy"],
  properties: {
    platform: str,
    userId: str,
    userName: { ...nullable("string"), description: "Untrusted text, render it as text." },
    approvedAt: { ...num, description: "Epoch seconds." },
    approvedBy: { ...nullable("string"), description: '"cli", "http" or "http:<key name>", or "<platform>:<admin id>" (from chat).' },
  },
});

/** `GET /pairing`: pending codes and approved people. */
export const pairingListSchema = named("PairingList", {
  type: "object",
  required: ["pending", "approved"],
  properties: {
    pending: { type: "array", items: pairingRequestSchema, description: "Unexpired codes, oldest first." },
    approved: { type: "array", items: pairingApprovalSchema, description: "By platform, then approval time." },
  },
});

/** A snapshot of the running gateway (`GET /gateway/status`, each event of `GET /gateway/live`). */
export const gatewaySnapshotSchema = named("GatewaySnapshot", {
  type: "object",
  properties: {
    at: { ...num, description: "Epoch seconds of the snapshot." },
    accepting: { type: "boolean", description: "False while draining for shutdown." },
    activeTurns: int,
    liveAgents: { ...int, description: "Sessions with a live agent in the gateway (active sessions)." },
    turnsCompleted: int,
    runningSessions: {
      type: "array",
      items: { type: "object", properties: { key: str, sessionId: nullable("string"), platform: str, phase: { type: "string", enum: ["turn", "between"] } } },
    },
    queueDepths: { type: "array", items: { type: "object", properties: { key: str, depth: int } } },
    queuedTotal: int,
    adapters: { type: "array", items: { type: "object", properties: { platform: str, connected: { type: "boolean" } } } },
  },
});

/** Whose memory: a platform and a user id; the gateway owner is `{ platform: "owner", userId: "owner" }` (`MemoryOwner`). */
export const memoryOwnerSchema = named("MemoryOwner", {
  type: "object",
  required: ["platform", "userId"],
  properties: {
    platform: { ...str, description: 'The platform (telegram, slack, cli…), or "owner" for the gateway owner.' },
    userId: { ...str, description: "The person's canonical (alias-resolved) user id on that platform." },
  },
});

/** A person's memory of one kind (`MemoryRecord`; `updatedAt` here in epoch seconds, like every time of this API). */
export const memoryRecordSchema = named("MemoryRecord", {
  type: "object",
  required: ["owner", "kind", "entries", "chars", "limit", "updatedAt", "version"],
  properties: {
    owner: memoryOwnerSchema,
    kind: { type: "string", enum: ["memory", "user"], description: "memory: the agent's notes (hermes' MEMORY.md); user: about the person (hermes' USER.md)." },
    entries: { type: "array", items: str, description: "The entries in order. Untrusted text (the model wrote it): render it as text." },
    chars: { ...int, description: 'Characters (code points) of the entries joined by "\\n§\\n": what the limit counts.' },
    limit: { ...int, description: "The kind's limit in characters: 2200 for memory, 1375 for user." },
    updatedAt: { ...num, description: "Epoch seconds of the last write." },
    version: { ...int, description: "Grows by one with every write: send it back as expectedVersion." },
  },
});

/** `GET /memory`: a page of memory records, newest first. */
export const memoryPageSchema = named("MemoryPage", {
  type: "object",
  required: ["items", "nextCursor"],
  properties: {
    items: { type: "array", items: memoryRecordSchema },
    nextCursor: { ...nullable("string"), description: "Pass as `cursor` for the next page; null on the last page." },
  },
});

/** `GET /memory/{platform}/{userId}`: both memories of one person. */
export const memoryPersonSchema = named("MemoryPerson", {
  type: "object",
  required: ["owner", "memory", "user"],
  properties: {
    owner: memoryOwnerSchema,
    memory: { anyOf: [memoryRecordSchema, { type: "null" }], description: "The agent's notes, or null when none are stored." },
    user: { anyOf: [memoryRecordSchema, { type: "null" }], description: "What the agent knows about the person, or null." },
  },
});

/** The path of one person's memory. */
export const memoryOwnerParams: JsonSchema = {
  type: "object",
  required: ["platform", "userId"],
  additionalProperties: false,
  properties: {
    platform: { type: "string", minLength: 1, maxLength: 256, description: 'The platform, or "owner" for the gateway owner (admin keys only).' },
    userId: { type: "string", minLength: 1, maxLength: 256, description: 'Their canonical user id on that platform ("owner" for the gateway owner).' },
  },
};

/** The path of one person's memory of one kind. */
export const memoryKindParams: JsonSchema = {
  type: "object",
  required: ["platform", "userId", "kind"],
  additionalProperties: false,
  properties: {
    ...(memoryOwnerParams["properties"] as Record<string, JsonSchema>),
    kind: { type: "string", enum: ["memory", "user"], description: "memory (the agent's notes) or user (about the person)." },
  },
};

/** The body of `PUT /memory/{platform}/{userId}/{kind}`. */
export const memoryWriteBody: JsonSchema = {
  type: "object",
  required: ["entries", "expectedVersion"],
  additionalProperties: false,
  properties: {
    entries: { type: "array", items: { type: "string" }, description: "The new entries, replacing all of them ([] keeps an empty record)." },
    expectedVersion: { type: ["integer", "null"], minimum: 1, description: "The version you read; null when the record must not exist yet." },
  },
};

/** The path of one attachment of a session. */
export const attachmentParams: JsonSchema = {
  type: "object",
  required: ["id", "sha256"],
  additionalProperties: false,
  properties: {
    id: { type: "string", minLength: 1, maxLength: 256, description: "The session id (exact)." },
    // Checked by the route (64 hex digits), so that anything else is a 400 naming the rule.
    sha256: { type: "string", description: "The attachment's id: the 64 lower-case hex digits of its SHA-256, as its attachment part names it." },
  },
};

/** One attachment of a session (`SessionAttachment`). */
export const attachmentSchema = named("SessionAttachment", {
  type: "object",
  properties: {
    sha256: { ...str, description: "The blob's SHA-256 (64 lower-case hex digits): its id in GET /sessions/{id}/attachments/{sha256}." },
    kind: { type: "string", enum: ["image", "audio", "video", "file"] },
    mimeType: { ...str, description: "The type its bytes were found to be (e.g. image/jpeg)." },
    size: { ...int, description: "Bytes." },
    fileName: nullable("string"),
    caption: nullable("string"),
    voice: { type: "boolean", description: "A voice note recorded in the chat." },
    meta: { type: ["object", "null"], additionalProperties: true, description: "Extra facts ({ durationSeconds }, { width, height }, { transcribed })." },
    sessionId: str,
    messageId: { ...int, description: "The message that refers to it." },
    stored: { type: "boolean", description: "Whether its bytes are stored (false after an import of an export made without media)." },
  },
});

/** `GET /sessions/{id}/attachments`. */
export const attachmentListSchema = named("SessionAttachmentList", {
  type: "object",
  properties: { items: { type: "array", items: attachmentSchema, description: "One entry per reference, oldest message first." } },
});
