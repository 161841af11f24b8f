/**
 * Options bound to an environment variable of the run's {@link CliIo.env} (`--db` to
 * THREADLINE_DB, `--config` to THREADLINE_CONFIG). Commander's own `Option.env()` reads
 * `process.env`; these read the io's environment instead, so a program run in process sees
 * the environment it was given. The help shows them as commander shows `.env()` options
 * (`(env: THREADLINE_DB)`), and the precedence is commander's: a value on the command line
 * wins over the variable, the variable over a default.
 *
 * @module
 */
import { Help, type Command, type Option } from "commander";
import { InternalError } from "../store/errors.js";
import type { CliIo } from "./cli-io.js";

/** The variable each bound option reads. */
const boundVariables = new WeakMap<Option, string>();

/**
 * Binds `option` (one that takes a plain value: `--db <target>`) to the environment variable
 * `name`, read from the io of the run by {@link applyOptionEnv}.
 *
 * @example
 * new Command("list").addOption(bindEnv(new Option("--db <target>", "database"), "THREADLINE_DB"));
 */
export function bindEnv(option: Option, name: string): Option {
  if (!option.required || option.variadic || option.parseArg !== undefined) {
    throw new InternalError(`bindEnv: ${option.flags} must take one plain value (<value>, no parser) to be read from ${name}.`);
  }
  boundVariables.set(option, name);
  return option;
}

/** The variable `option` is bound to, if any. */
function boundVariable(option: Option): string | undefined {
  return boundVariables.get(option);
}

/**
 * Makes the bound options of `program` and every command under it read `io.env` (call it
 * once every command is added): before an action runs, each bound option of the command and
 * its parents that was not given on the command line takes its variable's value when the
 * variable is set (even to an empty string, as commander does); the help lists the variable.
 */
export function applyOptionEnv(program: Command, io: CliIo): void {
  program.hook("preAction", (_hooked, actionCommand) => {
    for (let command: Command | null = actionCommand; command !== null; command = command.parent) {
      for (const option of command.options) {
        const name = boundVariable(option);
        if (name === undefined) continue;
        const value = io.env[name];
        if (value === undefined) continue;
        const key = option.attributeName();
        const source = command.getOptionValueSource(key);
        if (command.getOptionValue(key) === undefined || source === "default" || source === "config" || source === "env") {
          command.setOptionValueWithSource(key, value, "env");
        }
      }
    }
  });
  const visit = (command: Command): void => {
    command.configureHelp({
      ...command.configureHelp(),
      optionDescription(this: Help, option: Option): string {
        const name = boundVariable(option);
        // Described as commander describes an `.env(name)` option (the option itself is left as it is).
        const described = name === undefined ? option : Object.assign(Object.create(option) as Option, { envVar: name });
        return Help.prototype.optionDescription.call(this, described);
      },
    });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
