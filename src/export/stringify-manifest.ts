// A manifest document pcsync wrote, as text: one line per value (no folding), and string values
// that a terminal or CI runner could act on written double-quoted, with escapes (server-text.ts),
// so that printing an export is as safe as printing a plan, and it still reads back the same.

import { needsYamlEscapes, neutraliseYaml } from "../server-text.js";
import { type Document, isScalar, Scalar, visit } from "../vendor/yaml.js";

export function stringifyManifest(document: Document, options: { fresh: boolean }): string {
  visit(document, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === "string" && needsYamlEscapes(node.value)) {
        node.type = Scalar.QUOTE_DOUBLE;
      }
    },
  });
  const text = document.toString({ lineWidth: 0 });
  // An updated manifest keeps the user's own text as it was (see neutraliseYaml).
  return options.fresh ? neutraliseYaml(text) : text;
}
