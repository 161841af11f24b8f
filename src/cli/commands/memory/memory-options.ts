/**
 * The options every `memory` subcommand takes to name whose memory and which of the two:
 * `--for <platform>:<userId>` and `--user` (memory-target.ts reads them).
 *
 * @module
 */
import { Option } from "commander";

/** `--for <platform>:<userId>`. */
export function forOption(): Option {
  return new Option(
    "--for <platform:userId>",
    'whose memory: a person as <platform>:<userId> (e.g. telegram:123456789), or "owner" (default: the owner, the person at this terminal)',
  );
}

/** `--user`. */
export function userOption(): Option {
  return new Option("--user", "the USER memory (what the agent knows about the person) instead of MEMORY (the agent's own notes)");
}
