// The log-error fault: which plugin configs log ERROR entries after a change, and how many. Parses
// the `--fault-log-errors` selectors, checks the in-process form, and matches a record against them.

import type { LogErrorFault, StoredRecord } from "./types.js";

export const DEFAULT_LOG_ERROR_RATIO = 0.5;

const SELECTOR_KINDS = ["name", "plugin", "description"] as const;

// A trailing "@..." is read as a ratio only when it looks like a number, so a text holding "@"
// (an address in a description) needs no escaping; a typo such as "@0,8" is refused, not matched.
const RATIO_LIKE = /^[0-9.,]+$/;

/**
 * Parses `name:GLOB`, `plugin:ID` or `description:TEXT`, optionally ending in `@RATIO` (0 to 1).
 * Throws a RangeError whose message says what is wrong and what is expected.
 */
export function parseLogErrorFault(spec: string): LogErrorFault {
  let body = spec;
  let ratio: number | undefined;
  const at = spec.lastIndexOf("@");
  if (at !== -1 && RATIO_LIKE.test(spec.slice(at + 1))) {
    const raw = spec.slice(at + 1);
    ratio = Number(raw);
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new RangeError(`the ratio "@${raw}" must be a number from 0 to 1 (e.g. @0.8 for 80% errors)`);
    }
    body = spec.slice(0, at);
  }
  const colon = body.indexOf(":");
  const kind = colon === -1 ? "" : body.slice(0, colon);
  const value = body.slice(colon + 1);
  if (!(SELECTOR_KINDS as readonly string[]).includes(kind)) {
    throw new RangeError(
      'a selector is name:GLOB, plugin:ID or description:TEXT, optionally ending in @RATIO (e.g. "description:BROKEN@0.8")',
    );
  }
  if (value === "") throw new RangeError(`${kind}: needs a value after the colon`);
  const withRatio = ratio === undefined ? {} : { ratio };
  if (kind === "plugin") {
    if (!/^[0-9]{1,15}$/.test(value))
      throw new RangeError(`plugin: takes a plugin id (a number), got "${value}"`);
    return { plugin: Number(value), ...withRatio };
  }
  return kind === "name" ? { name: value, ...withRatio } : { description: value, ...withRatio };
}

/** Throws a RangeError for an in-process fault that is not one selector with a ratio from 0 to 1. */
export function checkLogErrorFaults(faults: readonly LogErrorFault[]): void {
  for (const [index, fault] of faults.entries()) {
    const kinds = SELECTOR_KINDS.filter((kind) => kind in fault);
    if (kinds.length !== 1) {
      throw new RangeError(`faults.logErrors[${index}] must have exactly one of name, plugin or description`);
    }
    const ratio = fault.ratio ?? DEFAULT_LOG_ERROR_RATIO;
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new RangeError(`faults.logErrors[${index}].ratio must be between 0 and 1, got ${ratio}`);
    }
  }
}

function globToRegExp(glob: string): RegExp {
  const parts = glob.split("*").map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/**
 * The ERROR share the record logs after its last change: that of the first fault matching it as it
 * is now, or undefined when none does. Case-sensitive, as the selectors are written.
 */
export function logErrorRatio(
  faults: readonly LogErrorFault[],
  record: StoredRecord,
  text: { name: string; description: string },
): number | undefined {
  for (const fault of faults) {
    const matches =
      "plugin" in fault
        ? record.plugin === fault.plugin
        : "name" in fault
          ? globToRegExp(fault.name).test(text.name)
          : text.description.includes(fault.description);
    if (matches) return fault.ratio ?? DEFAULT_LOG_ERROR_RATIO;
  }
  return undefined;
}
