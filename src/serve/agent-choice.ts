/**
 * Which agent and titler a gateway or a terminal chat uses, from the config file and the
 * environment: the OpenAI-compatible provider (with the `session_search` tool) when one is
 * configured, else the built-in echo agent; titles from the provider, else the heuristic.
 *
 * @module
 */
import {
  EchoAgent,
  HeuristicTitler,
  OpenAiCompatibleAgent,
  OpenAiTitler,
  resolveProviderConfig,
  type Agent,
  type ResolvedProviderConfig,
  type Titler,
} from "../agents/index.js";
import type { SessionDB } from "../store/index.js";
import { agentSummariser, sessionSearchTool } from "../tools/index.js";
import type { ServeConfig } from "./serve-config.js";

/** The chosen agent. */
export interface AgentChoice {
  /** Makes one agent per session. */
  factory: () => Agent;
  titler: Titler | null;
  /** The provider, or `null` for the echo agent. */
  provider: ResolvedProviderConfig | null;
  /** One line for people: which model answers. */
  describe: string;
}

/** Chooses the agent for `config` and `env` (OPENAI_BASE_URL, OPENAI_API_KEY, THREADLINE_MODEL). */
export function chooseAgent(config: ServeConfig, env: NodeJS.ProcessEnv, db: SessionDB): AgentChoice {
  const provider = resolveProviderConfig(config.provider ?? undefined, env);
  const heuristic = config.titles.enabled ? new HeuristicTitler() : null;
  if (provider === null) {
    return {
      factory: () => new EchoAgent(),
      titler: heuristic,
      provider: null,
      describe:
        "echo agent: no model provider is configured, so replies repeat what you type " +
        "(set provider: in the config file, or OPENAI_BASE_URL / OPENAI_API_KEY and THREADLINE_MODEL)",
    };
  }
  const search = config.tools.sessionSearch;
  const tools = search.enabled
    ? [
        sessionSearchTool(db, {
          charBudget: search.charBudget,
          scope: search.scope,
          summarise: search.summarise ? agentSummariser(new OpenAiCompatibleAgent(provider)) : null,
        }),
      ]
    : [];
  return {
    factory: () => new OpenAiCompatibleAgent({ ...provider, tools }),
    titler: config.titles.enabled ? new OpenAiTitler(provider) : null,
    provider,
    describe: `model ${provider.model} at ${provider.baseUrl}`,
  };
}
