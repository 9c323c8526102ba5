// `${NAME}` and `${NAME:-default}` in values and project keys, from the variables handed to pcsync;
// `$${` is a literal `${`. One pass: a variable's value is never interpolated again, so it cannot inject.

import { registryOf } from "../redact.js";
import { API_KEY_VARIABLE, type ManifestVariables, NO_VARIABLES, VARIABLE_ENV_PREFIX } from "./variables.js";

export interface InterpolatedText {
  /** Empty when it held the API key. */
  value: string;
  /** A reference or an escape was replaced, or the text was refused. */
  changed: boolean;
  /** `token`: the `${...}` a problem is about; "" for the text as a whole. */
  problems: { token: string; message: string }[];
}

/** One list for "no secrets", so that registryOf makes its registry once. */
export const NO_SECRETS: readonly string[] = [];

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

export const KEY_NEVER_INTERPOLATED =
  "the API key is never interpolated into a manifest (plans, pull-request comments and logs would show it)";

/** No value may contain the API key, written or interpolated: plans, PR comments and logs would show it. */
export function interpolateText(text: string, variables: ManifestVariables = NO_VARIABLES): InterpolatedText {
  const secrets = registryOf(variables.secrets ?? NO_SECRETS);
  if (secrets.holds(text))
    return refused(
      [],
      "this text contains the API key",
      "Remove it, and replace the key: it is in this file",
    );
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
      problems.push({
        token: text.slice(dollar, dollar + 40),
        message: "unclosed `${`: write ${NAME} or ${NAME:-default}, or `$${` for a literal `${`",
      });
      // The rest is kept as written.
      index = dollar;
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
  if (secrets.holds(value))
    return refused(
      problems,
      "after interpolation this text contains the API key",
      "Check the variables it uses",
    );
  return { value, changed, problems };
}

/** It becomes empty, and no message quotes it. */
function refused(problems: InterpolatedText["problems"], what: string, remedy: string): InterpolatedText {
  const message = `${what}; ${KEY_NEVER_INTERPOLATED}. ${remedy}`;
  return { value: "", changed: true, problems: [...problems, { token: "", message }] };
}

/** Undefined when any part cannot be interpolated (unset, refused). */
export function resolveTextWith(variables: ManifestVariables): (text: string) => string | undefined {
  return (text) => {
    const result = interpolateText(text, variables);
    return result.problems.length > 0 ? undefined : result.value;
  };
}

function describeUnset(name: string, variables: ManifestVariables): string {
  const envName = `${VARIABLE_ENV_PREFIX}${name}`;
  if (name.startsWith(VARIABLE_ENV_PREFIX) && name.length > VARIABLE_ENV_PREFIX.length) {
    const short = name.slice(VARIABLE_ENV_PREFIX.length);
    return `variable ${name} is not set; write \${${short}}: the ${VARIABLE_ENV_PREFIX} prefix belongs only on the environment variable (${name} sets \${${short}})`;
  }
  // An old manifest read plain environment variables: name the new spelling, never the value.
  if (variables.unprefixedEnvironmentNames?.has(name)) {
    return `variable ${name} is not set: pcsync no longer reads the environment variable ${name} (a manifest could read any secret that way); set ${envName} or pass --var ${name}=VALUE`;
  }
  return `variable ${name} is not set; set ${envName} in the environment, pass --var ${name}=VALUE or a --var-file, or give a default: \${${name}:-value}`;
}

function describeBadReference(inner: string): string {
  if (inner.includes("${"))
    return `nested \`\${\` in "\${${inner}}" is not supported; use one variable per reference`;
  const colon = /^([A-Za-z_][A-Za-z0-9_]*):([^-][\s\S]*)?$/.exec(inner);
  if (colon !== null)
    return `invalid reference "\${${inner}}"; for a default write \${${colon[1] ?? "NAME"}:-value}`;
  return `invalid reference "\${${inner}}"; write \${NAME} or \${NAME:-default} (letters, digits, _), or \`$\${\` for a literal \`\${\``;
}
