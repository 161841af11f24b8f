/**
 * `threadline/agents`: model plug-ins — the {@link Agent} and {@link Titler} interfaces, the
 * OpenAI-compatible provider, the offline echo agent and the heuristic titler.
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @example
 * import { EchoAgent, HeuristicTitler, OpenAiCompatibleAgent, OpenAiTitler } from "threadline/agents";
 * const agent = OpenAiCompatibleAgent.fromEnv() ?? new EchoAgent();
 * const titler = OpenAiTitler.fromEnv() ?? new HeuristicTitler();
 *
 * @module
 */

// The interfaces an agent and a titler implement.
export {
  AgentError,
  AgentInterruptedError,
  type Agent,
  type AgentTurnInput,
  type AgentTurnResult,
  type AgentResetInput,
  type AgentTool,
  type AgentToolDefinition,
  type AudioInput,
  type ToolCallContext,
  type TurnSpeaker,
  type Titler,
} from "./agent.js";

// The shipped agents and titlers.
export { OpenAiCompatibleAgent, type OpenAiCompatibleAgentOptions } from "./openai-agent.js";
export { OpenAiTitler, type OpenAiTitlerOptions } from "./openai-titler.js";
export type { FetchFunction } from "./openai-transport.js";
export {
  resolveProviderConfig,
  providerModelFor,
  type ProviderConfigSection,
  type ProviderModelEntry,
  type ProviderToolsSetting,
  type ResolvedProviderConfig,
} from "./provider-config.js";
export { RefusalMemo, type RefusalMemoOptions } from "./refusal-memo.js";
export { ToolSupport, type ToolSupportOptions } from "./tool-support.js";
export { VisionSupport, type VisionSupportOptions, type ProviderVisionSetting } from "./vision-support.js";
export { EchoAgent, type EchoAgentOptions } from "./echo-agent.js";
export { HeuristicTitler } from "./heuristic-titler.js";
