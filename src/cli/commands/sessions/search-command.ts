/**
 * The definition of `threadline sessions search` (arguments, options, help); its action (search-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import { parseCount } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { MESSAGE_ROLES, type MessageRole } from "../../../store/contract/history.js";
import { InvalidInputError } from "../../../store/errors.js";
import { lazyAction } from "../../action-loading.js";

function parseRole(value: string): MessageRole {
  const role = value.trim();
  if (!(MESSAGE_ROLES as readonly string[]).includes(role)) {
    throw new InvalidInputError(`--role must be one of ${MESSAGE_ROLES.join(", ")} (got "${value}").`, { field: "--role" });
  }
  return role as MessageRole;
}

/**
 * Builds `sessions search`. JSON: `{ "query": string, "totalHits": number, "sessions":
 * SearchGroupJson[] }`, sessions in the order of their best hit; snippets keep the
 * `>>>match<<<` markers.
 */
export function makeSearchCommand(io: CliIo): Command {
  return new Command("search")
    .description("search message text; hits grouped by session")
    .argument("[query...]", 'search words ("exact phrase", prefix*, OR, NOT); several words are joined with spaces')
    .option(
      "--discover",
      "what the agent's session_search tool returns: sessions grouped by conversation (a compressed chain once), with windows and bookends; a blank query lists recent sessions",
    )
    .addOption(sourceOption())
    .addOption(
      new Option("--role <role>", `only messages with this role (repeatable: ${MESSAGE_ROLES.join(", ")})`).argParser(
        (value: string, previous: MessageRole[] | undefined) => [...(previous ?? []), ...value.split(",").map(parseRole)],
      ),
    )
    .addOption(new Option("--limit <n>", "most hits to return (1 to 1000)").default(20).argParser((v: string) => parseCount(v, "--limit")))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./search-action.js")));
}
