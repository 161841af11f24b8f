/**
 * Model plug-ins: the {@link Agent} and {@link Titler} interfaces, the OpenAI-compatible
 * provider, the offline echo agent and the heuristic titler.
 *
 * @example
 * import { EchoAgent, HeuristicTitler, OpenAiCompatibleAgent, OpenAiTitler } from "./agents/index.js";
 * const agent = OpenAiCompatibleAgent.fromEnv() ?? new EchoAgent();
 * const titler = OpenAiTitler.fromEnv() ?? new HeuristicTitler();
 *
 * @module
 */
export * from "./agent.js";
export * from "./echo-agent.js";
export * from "./heuristic-titler.js";
export * from "./openai-provider.js";
export * from "./tool-support.js";
