/**
 * `threadline/tools`: tools agents can call — `session_search` over earlier conversations,
 * confined to what the asking session's user may see, and `memory`, the agent's bounded
 * memory of the person speaking (with its context-prompt section).
 *
 * The list is explicit: what other folders of this package share beyond it is in
 * `./internal.ts`, which is not an entry point. docs/api.md lists every export.
 *
 * @module
 */
export {
  sessionSearch,
  sessionSearchTool,
  SESSION_SEARCH_GUIDANCE,
  formatSessionSearch,
  agentSummariser,
  type SessionSearchOptions,
  type SessionSearchToolOptions,
  type SessionSearchResult,
  type FoundSession,
  type FoundMessage,
  type SessionSummariser,
} from "./session-search.js";
export { SESSION_SEARCH_SCOPES, type OwnerIdentities, type SessionSearchScope } from "./search-scope.js";
export { memoryTool, applyMemoryAction, MEMORY_GUIDANCE, type MemoryToolOptions, type MemoryToolStore } from "./memory-tool.js";
export { memoryOwnerFor, memoryOwnerOfCall, OWNER_MEMORY } from "./memory-owner.js";
export { memoryPromptFor, memoryPromptSection, neutraliseMemoryText, MEMORY_PROMPT_HEADING } from "./memory-prompt.js";
