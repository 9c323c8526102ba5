// The manifest options that validate, plan, apply, export, demo and watch share: -f, --var and
// --var-file (loading the manifest they name is src/run/load-manifest.ts).

import { type Command, Option } from "commander";
import type { ManifestInput } from "../run/load-manifest.js";
import { collect } from "./shared-options.js";

/** The options addManifestOption adds, plus the key file that plan and apply also take. */
export type ManifestFlags = ManifestInput;

/**
 * Adds `-f, --file PATH` (repeatable; none means pcsync.yaml), `--var NAME=VALUE` and
 * `--var-file FILE` (both repeatable); the action gets them as ManifestFlags.
 */
export function addManifestOption(command: Command): Command {
  command.addOption(
    new Option("-f, --file <path>", "manifest file, or directory of *.yaml/*.yml files; repeatable")
      .argParser(collect)
      .default([], "pcsync.yaml"),
  );
  return addVariableOptions(command);
}

/** Adds `--var NAME=VALUE` and `--var-file FILE`, both repeatable. */
export function addVariableOptions(command: Command): Command {
  return command
    .option(
      "--var <NAME=VALUE>",
      "set the manifest variable ${NAME}; overrides PCSYNC_VAR_NAME and --var-file; repeatable",
      collect,
    )
    .option(
      "--var-file <file>",
      "read manifest variables from a YAML file of `NAME: value` lines; overrides PCSYNC_VAR_*; repeatable",
      collect,
    );
}
