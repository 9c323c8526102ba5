// Refuses text the service would not store as written: a `name` or `description` with white space
// at either end, which the real service trims (trim-as-service.ts). A manifest kept in git should say
// what the service holds, byte for byte, on every server; so the file is fixed once, at its line,
// rather than rewritten in silence or warned about on every run.

import { describeUntrimmed } from "../trim-as-service.js";
import type { YamlProblem } from "./diagnostics.js";
import type { LocationIndex } from "./plain-manifest.js";

const CHECKED_KEYS = new Set(["name", "description"]);

/** Every config `name` and `description` in the manifest (configs, templates, sets, overrides). */
export function checkServiceText(root: unknown, locations: LocationIndex, errors: YamlProblem[]): void {
  walk(root, [], (path, key, text) => {
    // A project set's `name` is a label for messages, never sent.
    if (key === "name" && path.length === 2 && path[0] === "project_sets") return;
    const problem = describeUntrimmed(key, text);
    if (problem === undefined) return;
    const position = locations.lookup([...path, key])?.value ?? { line: 1, col: 1 };
    errors.push({ position, message: problem });
  });
}

function walk(
  value: unknown,
  path: (string | number)[],
  visit: (path: readonly (string | number)[], key: string, text: string) => void,
): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) walk(item, [...path, index], visit);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string" && CHECKED_KEYS.has(key)) visit(path, key, item);
    else walk(item, [...path, key], visit);
  }
}
