// Options that several commands share, so that each is spelt, described and checked the same way
// everywhere; old spellings are kept for a while with a warning.

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

/** `parse` returns undefined for a value that is not valid. */
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

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The one error for a family that is not one, whichever command it was given to. */
function parseFamily(value: string): FamilyName {
  if (isFamilyName(value)) return value;
  const suggestion = suggestFamily(value);
  throw new InputError(
    "usage",
    `unknown family "${value}" for --family${suggestion === undefined ? "" : `; did you mean "${suggestion}"?`}; use one of: ${FAMILY_NAMES.join(", ")}`,
  );
}

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

export const OUTPUT_FORMATS = ["text", "json", "markdown"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Markdown is for plans (a pull-request comment); logs, jobs and validation print text or JSON. */
export const TEXT_OR_JSON = ["text", "json"] as const satisfies readonly OutputFormat[];
export type TextOrJson = (typeof TEXT_OR_JSON)[number];

export function formatOption(
  description = "output format",
  formats: readonly OutputFormat[] = OUTPUT_FORMATS,
): Option {
  return new Option("--format <format>", description).choices(formats).default("text");
}

export function outOption(description: string): Option {
  return new Option("-o, --out <file>", description);
}

export interface OptionAlias {
  flags: string;
  attribute: string;
  /** Default: the value replaces that option's. */
  merge?: (value: string, previous: unknown) => unknown;
  /** A spelling on its way out, hidden from --help and warned about once per run: what to write instead. */
  replacement?: string;
  /** A synonym kept for good, shown in --help. */
  description?: string;
  choices?: readonly string[];
}

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

export function addManifestOption(command: Command): Command {
  command.addOption(
    new Option("-f, --file <path>", "manifest file, or directory of *.yaml/*.yml files; repeatable")
      .argParser(collect)
      .default([], "pcsync.yaml"),
  );
  return addVariableOptions(command);
}

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
