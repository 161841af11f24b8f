/**
 * The definition of `threadline service` (placeholder until the command lands).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";

/** Builds the `service` command group. */
export function makeServiceCommand(_io: CliIo): Command {
  return new Command("service").description("run the gateway as a system service (not implemented yet)");
}
