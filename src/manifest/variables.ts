// The variables a manifest's `${NAME}` may read: only what was handed to pcsync on purpose
// (PCSYNC_VAR_NAME, --var-file, --var), never the API key or a CI token.

import { appendAll } from "../append-all.js";
import { type ManifestDiagnostic, makeError, makeWarning } from "./diagnostics.js";
import { parseYaml } from "./load-yaml.js";
import type { BlockBuilder, ScalarValue } from "./parse-block-yaml.js";
import type { ManifestSource } from "./read-files.js";

export const VARIABLE_ENV_PREFIX = "PCSYNC_VAR_";

export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `${PCSYNC_API_KEY}` is refused whatever defines it, and no manifest value may contain the key. */
export const API_KEY_VARIABLE = "PCSYNC_API_KEY";

export interface ManifestVariable {
  value: string;
  /** Where it was set, for messages (never the value): `PCSYNC_VAR_X`, `--var X`, `vars.yaml:3:1`. */
  origin: string;
}

/** Build it with resolveVariables (or NO_VARIABLES). */
export interface ManifestVariables {
  values: ReadonlyMap<string, ManifestVariable>;
  /**
   * Names set in the environment without the prefix: an old manifest's `${NAME}` is told to use
   * PCSYNC_VAR_NAME. Only the names; their values are never read.
   */
  unprefixedEnvironmentNames?: ReadonlySet<string>;
  /** No manifest value may contain these, written or interpolated: the API key. */
  secrets?: readonly string[];
}

export const NO_VARIABLES: ManifestVariables = { values: new Map() };

export interface VariableAssignment {
  name: string;
  value: string;
}

export interface VariableInputs {
  /** Read for PCSYNC_VAR_* and PCSYNC_API_KEY (refused in any value), nothing else. */
  env: NodeJS.ProcessEnv;
  varFiles?: readonly ManifestSource[];
  assignments?: readonly VariableAssignment[];
  /** Besides the environment's PCSYNC_API_KEY (the content of --api-key-file). */
  secrets?: readonly string[];
}

export interface ResolvedVariables {
  variables: ManifestVariables;
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
}

/** Precedence: environment < var files (in order) < --var (last wins). */
export function resolveVariables(inputs: VariableInputs): ResolvedVariables {
  const values = new Map<string, ManifestVariable>();
  const unprefixed = new Set<string>();
  for (const [key, value] of Object.entries(inputs.env)) {
    if (value === undefined) continue;
    if (!key.startsWith(VARIABLE_ENV_PREFIX)) {
      unprefixed.add(key);
      continue;
    }
    const name = key.slice(VARIABLE_ENV_PREFIX.length);
    // Other names could never be written as ${NAME}; they are not ours to complain about.
    if (VARIABLE_NAME.test(name)) values.set(name, { value, origin: key });
  }
  const errors: ManifestDiagnostic[] = [];
  const warnings: ManifestDiagnostic[] = [];
  for (const source of inputs.varFiles ?? []) {
    const parsed = parseVarFile(source);
    // Loops, not push(...list): spreading a long list into a call overflows the stack.
    appendAll(errors, parsed.errors);
    appendAll(warnings, parsed.warnings);
    for (const [name, variable] of parsed.entries) values.set(name, variable);
  }
  for (const { name, value } of inputs.assignments ?? [])
    values.set(name, { value, origin: `--var ${name}` });

  const secrets = [...(inputs.secrets ?? []), inputs.env[API_KEY_VARIABLE] ?? ""];
  return {
    variables: {
      values,
      unprefixedEnvironmentNames: unprefixed,
      secrets: [...new Set(secrets.map((secret) => secret.trim()).filter((secret) => secret !== ""))],
    },
    errors,
    warnings,
  };
}

export function variablesFromEnvironment(env: NodeJS.ProcessEnv): ManifestVariables {
  return resolveVariables({ env }).variables;
}

/**
 * Parses one `--var` argument. The problem never quotes the argument: it may be a secret given
 * by mistake (`--var $TOKEN`), or a name and value split at the wrong `=`.
 */
export function parseVariableAssignment(argument: string): VariableAssignment | { problem: string } {
  const equals = argument.indexOf("=");
  if (equals < 0) return { problem: "expects NAME=VALUE, and this argument has no `=`" };
  const name = argument.slice(0, equals);
  if (!VARIABLE_NAME.test(name)) {
    return {
      problem:
        "expects NAME=VALUE, and the text before the first `=` is not a name (letters, digits and _, not starting with a digit)",
    };
  }
  return { name, value: argument.slice(equals + 1) };
}

const VAR_FILE_SHAPE = "a var file is a YAML mapping of `NAME: value` lines";

/**
 * A var file may hold secrets, so its messages name positions and keys, never values (nor the
 * parser's own text, which can quote them).
 */
export function parseVarFile(source: ManifestSource): {
  entries: [string, ManifestVariable][];
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
} {
  const { file } = source;
  const parsed = parseYaml(source.text, () => new VarFileBuilder(source.text));
  const errors: ManifestDiagnostic[] = [];
  const fail = (offset: number, message: string) =>
    errors.push(makeError(file, parsed.positionAt(offset), message));
  const warnings = parsed.warnings.map((warning) =>
    makeWarning(file, warning.position, "a tag here is ignored and the value read as text; remove the tag"),
  );
  const { root, entries: read } = parsed.built;
  if (parsed.fatal && root === undefined) {
    const position = parsed.errors[0]?.position ?? { line: 1, col: 1 };
    const message = `not valid YAML here; ${VAR_FILE_SHAPE} (quote a value that contains \`: \`, \`#\` or starts with a special character)`;
    // One error is enough: past the first syntax error the parser's positions are guesses.
    return { entries: [], errors: [makeError(file, position, message)], warnings };
  }
  // The other errors (duplicate keys, merge keys, aliases, nesting) name keys and anchors only.
  for (const problem of parsed.errors) errors.push(makeError(file, problem.position, problem.message));
  if (root === undefined || parsed.fatal) return { entries: [], errors, warnings };
  if (root.kind !== "map") {
    fail(root.offset, `${VAR_FILE_SHAPE}, such as \`PLUGIN_ID: 12\``);
    return { entries: [], errors, warnings };
  }
  const entries: [string, ManifestVariable][] = [];
  for (const entry of read) {
    if (!VARIABLE_NAME.test(entry.key)) {
      fail(
        entry.keyOffset,
        `"${entry.key}" is not a variable name; use letters, digits and _, not starting with a digit`,
      );
      continue;
    }
    if (entry.value === undefined) {
      fail(
        entry.valueOffset,
        `${entry.key} must have a single value (text, a number, true or false), not a list or mapping`,
      );
      continue;
    }
    const { line, col } = parsed.positionAt(entry.keyOffset);
    entries.push([entry.key, { value: entry.value, origin: `${file}:${line}:${col}` }]);
  }
  return { entries, errors, warnings };
}

/**
 * A value is the text it stands for in `${NAME}`: unquoted numbers, booleans and nulls as written
 * (`1.50` stays `1.50`), since the manifest types the text where it lands. Containers are their
 * depth (0: the document); a slot is its entry's index, or -1 below the entries.
 */
class VarFileBuilder implements BlockBuilder<number, number> {
  root: { kind: "map" | "seq" | "scalar"; offset: number } | undefined;
  /** `value` is undefined for a list or mapping. */
  readonly entries: { key: string; keyOffset: number; value: string | undefined; valueOffset: number }[] = [];

  constructor(private readonly text: string) {}

  container(kind: "map" | "seq", offset: number, slot: number | null): number {
    if (slot === null) this.root = { kind, offset };
    else this.setValue(slot, undefined, offset);
    return slot === null ? 0 : 1;
  }

  scalar(value: ScalarValue, offset: number, end: number, slot: number | null): void {
    if (slot === null) this.root = { kind: "scalar", offset };
    else this.setValue(slot, typeof value === "string" ? value : this.text.slice(offset, end).trim(), offset);
  }

  entrySlot(map: number, key: string, keyOffset: number): number {
    if (map !== 0) return -1;
    return this.entries.push({ key, keyOffset, value: undefined, valueOffset: keyOffset }) - 1;
  }

  itemSlot(): number {
    return -1;
  }

  end(): void {}

  private setValue(slot: number, value: string | undefined, offset: number): void {
    const entry = this.entries[slot];
    if (entry === undefined) return;
    entry.value = value;
    entry.valueOffset = offset;
  }
}
