// `${VAR}` and `${VAR:-default}` in values and project keys, from the environment; `$${` writes a
// literal `${`. One pass: a variable's value is never interpolated again, so it cannot inject more.

import type { Position } from "./diagnostics.js";
import type { MapEntry, ScalarNode, SourceSpan, ValueNode, YamlProblem } from "./load-yaml.js";

export interface InterpolatedText {
  value: string;
  /** Whether anything was replaced (a reference or an escape). */
  changed: boolean;
  problems: { token: string; message: string }[];
}

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/** Replaces the references in one string; problems name the `${...}` token they are about. */
export function interpolateText(text: string, env: NodeJS.ProcessEnv): InterpolatedText {
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
    const fromEnv = env[name];
    // As in the shell, `:-` also replaces a variable that is set but empty.
    if (fromEnv !== undefined && (fallback === undefined || fromEnv !== "")) value += fromEnv;
    else if (fallback !== undefined) value += fallback;
    else {
      problems.push({
        token,
        message: `environment variable ${name} is not set; set it, or give a default: \${${name}:-value}`,
      });
    }
  }
  value += text.slice(index);
  return { value, changed, problems };
}

function describeBadReference(inner: string): string {
  if (inner.includes("${"))
    return `nested \`\${\` in "\${${inner}}" is not supported; use one variable per reference`;
  const colon = /^([A-Za-z_][A-Za-z0-9_]*):([^-][\s\S]*)?$/.exec(inner);
  if (colon !== null)
    return `invalid reference "\${${inner}}"; for a default write \${${colon[1] ?? "NAME"}:-value}`;
  return `invalid reference "\${${inner}}"; write \${NAME} or \${NAME:-default} (letters, digits, _), or \`$\${\` for a literal \`\${\``;
}

/** Interpolates every string value, and the project ids (the keys of `projects`). */
export function interpolateTree(
  root: ValueNode,
  env: NodeJS.ProcessEnv,
  positionAt: (offset: number) => Position,
): { root: ValueNode; errors: YamlProblem[] } {
  const errors: YamlProblem[] = [];

  const interpolateSpan = (text: string, span: SourceSpan): { value: string; changed: boolean } => {
    const result = interpolateText(text, env);
    let searchFrom = 0;
    for (const problem of result.problems) {
      // Point at the reference itself when it appears verbatim in the source (it does unless escaped).
      const found = span.text.indexOf(problem.token, searchFrom);
      if (found >= 0) searchFrom = found + problem.token.length;
      const position = found >= 0 ? positionAt(span.offset + found) : span.position;
      errors.push({ position, message: problem.message });
    }
    return { value: result.value, changed: result.changed };
  };

  const visit = (node: ValueNode, isProjects: boolean, isRoot: boolean): ValueNode => {
    if (node.kind === "scalar") {
      if (typeof node.value !== "string") return node;
      const { value, changed } = interpolateSpan(node.value, node.span);
      return changed ? ({ ...node, value, interpolated: true } satisfies ScalarNode) : node;
    }
    if (node.kind === "seq") return { ...node, items: node.items.map((item) => visit(item, false, false)) };
    const entries: MapEntry[] = [];
    const seen = new Map<string, Position>();
    for (const entry of node.entries) {
      const key = isProjects ? interpolateSpan(entry.key, entry.keySpan).value : entry.key;
      const first = seen.get(key);
      if (first !== undefined) {
        // Only interpolation can make two keys equal: the parser already refused literal duplicates.
        errors.push({
          position: entry.keySpan.position,
          message: `project "${key}" is also defined at line ${first.line}, column ${first.col} (after interpolation); merge the two blocks`,
        });
        continue;
      }
      seen.set(key, entry.keySpan.position);
      entries.push({ ...entry, key, value: visit(entry.value, isRoot && entry.key === "projects", false) });
    }
    return { ...node, entries };
  };

  return { root: visit(root, false, true), errors };
}
