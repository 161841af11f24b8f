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
  ToolSupport,
  type Agent,
  type ResolvedProviderConfig,
  type Titler,
} from "../agents/index.js";
import { contextWindowFor, type ContextWindow } from "../context/index.js";
import type { ContextWindowResolver } from "../gateway/index.js";
import type { AliasStore, SessionHistory, SessionSearch } from "../store/index.js";
import { agentSummariser, sessionSearchTool } from "../tools/index.js";
import { ownerIdentities } from "./owner-identities.js";
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
  /** The context window of a turn's provider model (`undefined`: the provider's default model). */
  contextWindow: ContextWindowResolver;
  /** The default model's window and where it came from (for the startup log). */
  defaultWindow: ContextWindow & { model: string | null };
}

/**
 * The context window of each provider model: its `provider.models` entry's `contextWindow`,
 * else `provider.contextWindow` (the operator's word on this endpoint, such as Ollama's
 * `num_ctx`, wins over the table), else the table of well-known models, else the default.
 */
export function providerContextWindows(provider: ResolvedProviderConfig | null): ContextWindowResolver {
  return (model) => {
    const name = model === undefined || model.trim() === "" ? (provider?.model ?? null) : model.trim();
    const configured = name === null || provider === null ? undefined : (provider.contextWindows?.[name] ?? provider.contextWindow);
    return { model: name, ...contextWindowFor(name, configured) };
  };
}

/** The names of the tools a provider's agent can be given (`provider.tools: [names]` picks among them). */
export const AGENT_TOOL_NAMES: readonly string[] = Object.freeze(["session_search"]);

/** Hooks of {@link chooseAgent}. */
export interface AgentChoiceHooks {
  /** The provider refused a request for carrying tools; its turns go on without them for the rest of the process. */
  onToolsRefused?: (info: { baseUrl: string; model: string; providerMessage: string }) => void;
}

/**
 * Chooses the agent for `config` and `env` (OPENAI_BASE_URL, OPENAI_API_KEY, THREADLINE_MODEL).
 * The provider's agents get the tools `provider.tools` allows (`auto`: every enabled tool;
 * `off`: none; a list: those named) and share one memo of refused tools.
 */
export function chooseAgent(
  config: ServeConfig,
  env: NodeJS.ProcessEnv,
  db: SessionHistory & SessionSearch & AliasStore,
  hooks: AgentChoiceHooks = {},
): AgentChoice {
  const provider = resolveProviderConfig(config.provider ?? undefined, env);
  const heuristic = config.titles.enabled ? new HeuristicTitler() : null;
  const contextWindow = providerContextWindows(provider);
  const defaultWindow = contextWindow(undefined);
  if (provider === null) {
    return {
      contextWindow,
      defaultWindow,
      factory: () => new EchoAgent(),
      titler: heuristic,
      provider: null,
      describe:
        "echo agent: no model provider is configured, so replies repeat what you type " +
        "(set provider: in the config file, or OPENAI_BASE_URL / OPENAI_API_KEY and THREADLINE_MODEL)",
    };
  }
  const { tools: setting, models: _models, contextWindow: _window, contextWindows: _windows, ...connection } = provider;
  const search = config.tools.sessionSearch;
  const owner = ownerIdentities(config);
  const allowed = (name: string): boolean => setting === "auto" || (Array.isArray(setting) && setting.includes(name));
  const tools = search.enabled && allowed("session_search")
    ? [
        sessionSearchTool(db, {
          charBudget: search.charBudget,
          scope: search.scope,
          ...(owner === undefined ? {} : { owner }),
          summarise: search.summarise ? agentSummariser(new OpenAiCompatibleAgent(connection)) : null,
        }),
      ]
    : [];
  const toolSupport = new ToolSupport(hooks.onToolsRefused === undefined ? {} : { onRefused: hooks.onToolsRefused });
  return {
    factory: () => new OpenAiCompatibleAgent({ ...connection, tools, toolSupport }),
    titler: config.titles.enabled ? new OpenAiTitler(provider) : null,
    provider,
    describe: `model ${provider.model} at ${provider.baseUrl}`,
    contextWindow,
    defaultWindow,
  };
}
