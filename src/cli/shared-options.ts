// Options that several commands share, so that each is spelt, described and checked the same way
// everywhere: `--family`, `--format`, `-o/--out`, the manifest's `-f`, `--var` and `--var-file`
// (loading it is src/run/load-manifest.ts), repeatable options, the error for a bad value, and old
// spellings kept for a while with a warning.

import { type Command, Option } from "commander";
import { FAMILY_NAMES, type FamilyName, isFamilyName } from "../families.js";
import { InputError } from "../input-error.js";
import { suggestClosest } from "../manifest/suggest.js";
import type { CliIo } from "./cli-io.js";

/** A typo of a family, or a part of exactly one family's name (`frontend`). */
function suggestFamily(value: string): FamilyName | undefined {
  const close = suggestClosest(value, FAMILY_NAMES);
  if (close !== undefined) return close as FamilyName;
  const word = value.trim().toLowerCase();
  if (word.length < 3) return undefined;
  const containing = FAMILY_NAMES.filter((name) => name.includes(word));
  return containing.length === 1 ? containing[0] : undefined;
}

/** `value` as `parse` reads it (undefined: not valid), or the usage error `FLAG must be WHAT, not "VALUE"`. */
export function parseFlag<T>(
  flag: string,
  value: string,
  what: string,
  parse: (value: string) => T | undefined,
): T {
  const parsed = parse(value);
  if (parsed === undefined) throw new InputError("usage", `${flag} must be ${what}, not "${value}"`);
  return parsed;
}

/** The parser of a repeatable option: each use adds its value to the list. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A --family value, or the one error for one that is not a family, whichever command it was given to. */
function parseFamily(value: string): FamilyName {
  if (isFamilyName(value)) return value;
  const suggestion = suggestFamily(value);
  throw new InputError(
    "usage",
    `unknown family "${value}" for --family${suggestion === undefined ? "" : `; did you mean "${suggestion}"?`}; use one of: ${FAMILY_NAMES.join(", ")}`,
  );
}

/**
 * `--family NAME`: one of the two families, checked as it is parsed. `repeatable` collects several
 * (plan, apply, export select families); otherwise the command acts on one record's family.
 */
export function familyOption(description: string, options: { repeatable: boolean }): Option {
  const option = new Option("--family <name>", description).choices(FAMILY_NAMES);
  // The choices stay for --help and completion; the parser gives the same error on every command.
  return options.repeatable
    ? option.argParser((value: string, previous: FamilyName[] | undefined) => [
        ...(previous ?? []),
        parseFamily(value),
      ])
    : option.argParser((value: string) => parseFamily(value));
}

/** Every format pcsync prints in; each command offers those it can print. */
export const OUTPUT_FORMATS = ["text", "json", "markdown"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Markdown is for plans (a pull-request comment); logs, jobs and validation print text or JSON. */
export const TEXT_OR_JSON = ["text", "json"] as const satisfies readonly OutputFormat[];
export type TextOrJson = (typeof TEXT_OR_JSON)[number];

/** `--format`: one of `formats` (checked by commander), text by default. */
export function formatOption(
  description = "output format",
  formats: readonly OutputFormat[] = OUTPUT_FORMATS,
): Option {
  return new Option("--format <format>", description).choices(formats).default("text");
}

/** `-o, --out FILE`: every command that writes a file names it so. */
export function outOption(description: string): Option {
  return new Option("-o, --out <file>", description);
}

/** A second spelling of an option: its value goes to the option it stands for. */
export interface OptionAlias {
  /** The spelling, e.g. `--output <file>`. */
  flags: string;
  /** The attribute of the option it stands for, e.g. `out`. */
  attribute: string;
  /** How the value joins that option's (repeatable options collect); default: replaces it. */
  merge?: (value: string, previous: unknown) => unknown;
  /**
   * A spelling on its way out: hidden from --help, and stderr says, once per run, that it goes
   * in the next minor version and what to write instead (as the user writes it, e.g. `-o/--out`).
   */
  replacement?: string;
  /** A synonym kept for good: shown in --help with this text. */
  description?: string;
  /** With `description`: the values --help and completion offer. */
  choices?: readonly string[];
}

/** Adds `alias`: a synonym shown in --help, or an old spelling that warns (see OptionAlias). */
export function addOptionAlias(command: Command, alias: OptionAlias, io: CliIo): void {
  let warned = false;
  const name = alias.flags.split(/[ ,]/)[0] ?? alias.flags;
  const option = new Option(alias.flags, alias.description);
  if (alias.choices !== undefined) option.choices(alias.choices);
  if (alias.replacement !== undefined) option.hideHelp();
  // A value that is not merged: the two spellings giving two values are refused, not the last kept.
  let fromPrimary: string | undefined;
  let fromAlias: string | undefined;
  const twice = (primary: string | undefined, spelt: string | undefined) => {
    if (alias.merge !== undefined || primary === undefined || spelt === undefined || primary === spelt)
      return;
    throw new InputError(
      "usage",
      `--${alias.attribute} ${JSON.stringify(primary)} and ${name} ${JSON.stringify(spelt)} are one option given two values: give one`,
    );
  };
  command.on(`option:${alias.attribute}`, (value: string) => {
    fromPrimary = value;
    twice(fromPrimary, fromAlias);
  });
  command.addOption(
    option.argParser((value: string) => {
      fromAlias = value;
      twice(fromPrimary, fromAlias);
      if (alias.replacement !== undefined && !warned) {
        warned = true;
        io.stderr.write(
          `warning: ${name} is deprecated and will be removed in the next minor version; use ${alias.replacement}\n`,
        );
      }
      const previous = command.getOptionValue(alias.attribute);
      const merged = alias.merge === undefined ? value : alias.merge(value, previous);
      command.setOptionValueWithSource(alias.attribute, merged, "cli");
      return undefined;
    }),
  );
}

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
