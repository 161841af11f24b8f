/**
 * Which agent and titler a gateway or a terminal chat uses, from the config file and the
 * environment: the OpenAI-compatible provider (with the `session_search` and `memory` tools)
 * when one is configured, else the built-in echo agent; titles from the provider, else the heuristic.
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
  VisionSupport,
  type Agent,
  type AgentTool,
  type ResolvedProviderConfig,
  type Titler,
  type TurnSpeaker,
} from "../agents/index.js";
import { contextWindowFor, type ContextWindow } from "../context/index.js";
import type { ContextWindowResolver } from "../gateway/index.js";
import type { AliasStore, MemoryStore, SessionHistory, SessionSearch } from "../store/index.js";
import { agentSummariser, memoryPromptFor, memoryTool, sessionSearchTool, type OwnerIdentities } from "../tools/index.js";
import { osUserName } from "../adapters/internal.js";
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
  /**
   * The memory section of the context prompt for a speaker (the runner's `memoryFor`), or
   * `null` when the agent has no `memory` tool (then no memory is shown either).
   */
  memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
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
export const AGENT_TOOL_NAMES: readonly string[] = Object.freeze(["session_search", "memory"]);

/**
 * Whose memory is the owner's (`{ platform: "owner", userId: "owner" }`): the identities of
 * `gateway.owner` (see {@link ownerIdentities}); without it, the person at this machine's
 * terminal (`cli`, the operating-system user), who `threadline memory` shows by default.
 */
export function memoryOwnerIdentities(config: Pick<ServeConfig, "gateway">, terminalUser: () => string = osUserName): OwnerIdentities {
  return ownerIdentities(config, terminalUser) ?? { cli: [terminalUser()] };
}

/** Hooks of {@link chooseAgent}. */
export interface AgentChoiceHooks {
  /** The provider refused a request for carrying tools; its turns go on without them for the rest of the process. */
  onToolsRefused?: (info: { baseUrl: string; model: string; providerMessage: string }) => void;
  /** The provider refused images for a model (`provider.vision: auto`); its requests go on with placeholders for the rest of the process. */
  onImagesRefused?: (info: { baseUrl: string; model: string; providerMessage: string }) => void;
}

/**
 * Chooses the agent for `config` and `env` (OPENAI_BASE_URL, OPENAI_API_KEY, THREADLINE_MODEL).
 * The provider's agents get the tools `provider.tools` allows (`auto`: every enabled tool;
 * `off`: none; a list: those named) and share one memo of refused tools, and one of models that refused images.
 */
export function chooseAgent(
  config: ServeConfig,
  env: NodeJS.ProcessEnv,
  db: SessionHistory & SessionSearch & AliasStore & MemoryStore,
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
      memoryFor: null,
      describe:
        "echo agent: no model provider is configured, so replies repeat what you type " +
        "(set provider: in the config file, or OPENAI_BASE_URL / OPENAI_API_KEY and THREADLINE_MODEL)",
    };
  }
  const { tools: setting, models: _models, contextWindow: _window, contextWindows: _windows, ...connection } = provider;
  const search = config.tools.sessionSearch;
  const owner = ownerIdentities(config);
  const allowed = (name: string): boolean => setting === "auto" || (Array.isArray(setting) && setting.includes(name));
  const tools: AgentTool[] =
    search.enabled && allowed("session_search")
      ? [
          sessionSearchTool(db, {
            charBudget: search.charBudget,
            scope: search.scope,
            ...(owner === undefined ? {} : { owner }),
            summarise: search.summarise ? agentSummariser(new OpenAiCompatibleAgent(connection)) : null,
          }),
        ]
      : [];
  const memoryOwner = memoryOwnerIdentities(config);
  const withMemory = config.tools.memory.enabled && allowed("memory");
  if (withMemory) tools.push(memoryTool(db, { owner: memoryOwner }));
  const toolSupport = new ToolSupport(hooks.onToolsRefused === undefined ? {} : { onRefused: hooks.onToolsRefused });
  const visionSupport = new VisionSupport(hooks.onImagesRefused === undefined ? {} : { onRefused: hooks.onImagesRefused });
  return {
    factory: () => new OpenAiCompatibleAgent({ ...connection, tools, toolSupport, visionSupport }),
    titler: config.titles.enabled ? new OpenAiTitler(provider) : null,
    provider,
    memoryFor: withMemory ? (speaker) => memoryPromptFor(db, speaker, memoryOwner) : null,
    describe: `model ${provider.model} at ${provider.baseUrl}`,
    contextWindow,
    defaultWindow,
  };
}
