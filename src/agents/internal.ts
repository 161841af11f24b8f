/**
 * What the package's own folders share from `src/agents/` beyond its public API (never an entry
 * point): the one validator of a `provider` section, which `threadline serve` runs on its config file.
 *
 * @module
 */
export {
  MIN_PROVIDER_TIMEOUT_MS,
  providerExpected,
  providerSectionProblems,
  type ProviderSectionCheckOptions,
  type ProviderSectionProblem,
} from "./provider-config.js";
