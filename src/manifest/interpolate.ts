// `${NAME}` and `${NAME:-default}` in values and project keys, from the variables handed to pcsync
// (see variables.ts), never from the rest of the environment; `$${` writes a literal `${`. One pass:
// a variable's value is never interpolated again, so it cannot inject more. No value may contain
// the API key, written or interpolated: plans, pull-request comments and logs would show it.

import { registryOf } from "../redact.js";
import type { Position } from "./diagnostics.js";
import { API_KEY_VARIABLE, type ManifestVariables, NO_VARIABLES, VARIABLE_ENV_PREFIX } from "./variables.js";
import type { MapEntry, ScalarNode, ValueNode, YamlProblem, YamlSource } from "./yaml-nodes.js";

export interface InterpolatedText {
  /** The text with references replaced; empty when it held the API key. */
  value: string;
  /** Whether anything was replaced (a reference or an escape), or the text was refused. */
  changed: boolean;
  /** Problems name the `${...}` token they are about; "" for the text as a whole. */
  problems: { token: string; message: string }[];
}

/** One list for "no secrets", so that registryOf makes its registry once. */
const NO_SECRETS: readonly string[] = [];

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

const KEY_NEVER_INTERPOLATED =
  "the API key is never interpolated into a manifest (plans, pull-request comments and logs would show it)";

/** Replaces the references in one string. */
export function interpolateText(text: string, variables: ManifestVariables = NO_VARIABLES): InterpolatedText {
  const secrets = registryOf(variables.secrets ?? NO_SECRETS);
  if (secrets.holds(text)) {
    return {
      value: "",
      changed: true,
      problems: [
        {
          token: "",
          message: `this text contains the API key; ${KEY_NEVER_INTERPOLATED}. Remove it, and replace the key: it is in this file`,
        },
      ],
    };
  }
  if (!text.includes("${")) return { value: text, changed: false, problems: [] };
  const problems: InterpolatedText["problems"] = [];
  let value = "";
  let changed = false;
  let index = 0;
  while (index < text.length) {
    const dollar = text.indexOf("$", index);
    if (dollar < 0) break;
    value += text.slice(index, dollar);
    if (text.startsWith("$${", dollar)) {
      value += "${";
      changed = true;
      index = dollar + 3;
      continue;
    }
    if (!text.startsWith("${", dollar)) {
      value += "$";
      index = dollar + 1;
      continue;
    }
    const close = text.indexOf("}", dollar + 2);
    if (close < 0) {
      const token = text.slice(dollar, dollar + 40);
      problems.push({
        token,
        message: "unclosed `${`: write ${NAME} or ${NAME:-default}, or `$${` for a literal `${`",
      });
      value += text.slice(dollar);
      index = text.length;
      break;
    }
    const token = text.slice(dollar, close + 1);
    const inner = text.slice(dollar + 2, close);
    index = close + 1;
    changed = true;
    const match = REFERENCE.exec(inner);
    const name = match?.[1];
    const fallback = match?.[2];
    if (match === null || name === undefined || fallback?.includes("${")) {
      problems.push({ token, message: describeBadReference(inner) });
      value += token;
      continue;
    }
    if (name === API_KEY_VARIABLE) {
      problems.push({
        token,
        message: `\${${name}} is refused: ${KEY_NEVER_INTERPOLATED}; pcsync reads the key only to authenticate`,
      });
      continue;
    }
    const variable = variables.values.get(name);
    if (variable !== undefined && secrets.holds(variable.value)) {
      problems.push({
        token,
        message: `the value of ${name} (from ${variable.origin}) contains the API key; ${KEY_NEVER_INTERPOLATED}. Give ${name} another value`,
      });
      continue;
    }
    // As in the shell, `:-` also replaces a variable that is set but empty.
    if (variable !== undefined && (fallback === undefined || variable.value !== "")) value += variable.value;
    else if (fallback !== undefined) value += fallback;
    else problems.push({ token, message: describeUnset(name, variables) });
  }
  value += text.slice(index);
  // Each part may be harmless while the parts together spell the key, also next to a refused part.
  if (secrets.holds(value)) {
    return {
      value: "",
      changed: true,
      problems: [
        ...problems,
        {
          token: "",
          message: `after interpolation this text contains the API key; ${KEY_NEVER_INTERPOLATED}. Check the variables it uses`,
        },
      ],
    };
  }
  return { value, changed, problems };
}

/** Interpolates a whole text, or gives undefined when any part cannot be (unset, refused). */
export function resolveTextWith(variables: ManifestVariables): (text: string) => string | undefined {
  return (text) => {
    const result = interpolateText(text, variables);
    return result.problems.length > 0 ? undefined : result.value;
  };
}

function describeUnset(name: string, variables: ManifestVariables): string {
  const envName = `${VARIABLE_ENV_PREFIX}${name}`;
  const ways = `set ${envName} in the environment, pass --var ${name}=VALUE or a --var-file, or give a default: \${${name}:-value}`;
  if (name.startsWith(VARIABLE_ENV_PREFIX) && name.length > VARIABLE_ENV_PREFIX.length) {
    const short = name.slice(VARIABLE_ENV_PREFIX.length);
    return `variable ${name} is not set; write \${${short}}: the ${VARIABLE_ENV_PREFIX} prefix belongs only on the environment variable (${name} sets \${${short}})`;
  }
  // An old manifest read plain environment variables: name the new spelling, never the value.
  if (variables.unprefixedEnvironmentNames?.has(name)) {
    return `variable ${name} is not set: pcsync no longer reads the environment variable ${name} (a manifest could read any secret that way); set ${envName} or pass --var ${name}=VALUE`;
  }
  return `variable ${name} is not set; ${ways}`;
}

function describeBadReference(inner: string): string {
  if (inner.includes("${"))
    return `nested \`\${\` in "\${${inner}}" is not supported; use one variable per reference`;
  const colon = /^([A-Za-z_][A-Za-z0-9_]*):([^-][\s\S]*)?$/.exec(inner);
  if (colon !== null)
    return `invalid reference "\${${inner}}"; for a default write \${${colon[1] ?? "NAME"}:-value}`;
  return `invalid reference "\${${inner}}"; write \${NAME} or \${NAME:-default} (letters, digits, _), or \`$\${\` for a literal \`\${\``;
}

/**
 * Interpolates every string value, and the project ids (the keys of `projects`). Any other key
 * holding the API key is refused (and dropped, so that no later message quotes it).
 */
export function interpolateTree(
  root: ValueNode,
  variables: ManifestVariables,
  source: YamlSource,
): { root: ValueNode; errors: YamlProblem[] } {
  const { positionAt } = source;
  const errors: YamlProblem[] = [];
  const secrets = registryOf(variables.secrets ?? NO_SECRETS);

  /** Interpolates `text`, written from `offset` to `end` of the source. */
  const interpolateSpan = (
    text: string,
    offset: number,
    end: number,
  ): { value: string; changed: boolean; failed: boolean } => {
    const result = interpolateText(text, variables);
    const written = result.problems.length > 0 ? source.text.slice(offset, end) : "";
    let searchFrom = 0;
    for (const problem of result.problems) {
      // Point at the reference itself when it appears verbatim in the source (it does unless escaped).
      const found = written.indexOf(problem.token, searchFrom);
      if (found >= 0) searchFrom = found + problem.token.length;
      const position = positionAt(found >= 0 ? offset + found : offset);
      errors.push({ position, message: problem.message });
    }
    return { value: result.value, changed: result.changed, failed: result.problems.length > 0 };
  };

  // Nodes without a change are kept as they are: a big manifest is mostly text without `${`.
  const visit = (node: ValueNode, isProjects: boolean, isRoot: boolean): ValueNode => {
    if (node.kind === "scalar") {
      if (typeof node.value !== "string") return node;
      // What interpolateText would find unchanged, without its allocations: most values.
      if (!node.value.includes("${") && !secrets.holds(node.value)) return node;
      const { value, changed } = interpolateSpan(node.value, node.offset, node.end);
      return changed ? ({ ...node, value, interpolated: true } satisfies ScalarNode) : node;
    }
    if (node.kind === "seq") {
      let items: ValueNode[] | undefined;
      for (let index = 0; index < node.items.length; index++) {
        const item = node.items[index] as ValueNode;
        const visited = visit(item, false, false);
        if (visited !== item) {
          items ??= node.items.slice();
          items[index] = visited;
        }
      }
      return items === undefined ? node : { ...node, items };
    }
    const entries: MapEntry[] = [];
    let changed = false;
    const seen = new Map<string, Position>();
    for (const entry of node.entries) {
      if (!isProjects) {
        if (secrets.holds(entry.key)) {
          errors.push({
            position: positionAt(entry.keyOffset),
            message: `this key contains the API key; ${KEY_NEVER_INTERPOLATED}. Remove it, and replace the key: it is in this file`,
          });
          changed = true;
          continue;
        }
        const value = visit(entry.value, isRoot && entry.key === "projects", false);
        if (value !== entry.value) changed = true;
        entries.push(value === entry.value ? entry : { ...entry, value });
        continue;
      }
      const { value: key, failed } = interpolateSpan(entry.key, entry.keyOffset, entry.keyEnd);
      const keyPosition = positionAt(entry.keyOffset);
      const first = seen.get(key);
      if (first !== undefined) {
        // Only interpolation can make two keys equal: the parser already refused literal duplicates.
        errors.push({
          position: keyPosition,
          message: `project "${key}" is also defined at line ${first.line}, column ${first.col} (after interpolation); merge the two blocks`,
        });
        changed = true;
        continue;
      }
      // A key that failed to interpolate is not a project id to compare with the others.
      if (!failed) seen.set(key, keyPosition);
      const value = visit(entry.value, false, false);
      if (key !== entry.key || value !== entry.value) changed = true;
      entries.push(key === entry.key && value === entry.value ? entry : { ...entry, key, value });
    }
    return changed ? { ...node, entries } : node;
  };

  return { root: visit(root, false, true), errors };
}
