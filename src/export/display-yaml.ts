// An exported manifest as it is printed (stdout: a terminal, a CI log, a pipe; or a device or FIFO
// given to -o): the same data as the file pcsync writes, with server text that a terminal or a CI
// runner would act on written as YAML's own escapes (src/neutralise-server-text.ts), so that printing it
// drives neither. A regular file gets the text as the service holds it, byte for byte.

import { needsYamlEscapes, neutraliseYaml } from "../neutralise-server-text.js";
import { type Document, Scalar, visit } from "../vendor/yaml.js";

/** Where an exported manifest goes: a regular file gets the exact text, anything else is printed. */
export type ExportDestination = "file" | "display";

/** The document as text for `destination`; without line folding, as every export is written. */
export function exportText(document: Document, destination: ExportDestination): string {
  if (destination === "file") return document.toString({ lineWidth: 0 });
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && needsYamlEscapes(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  // One line per double-quoted scalar: a line break in it is `\n`, so no line of it starts with `::`.
  return neutraliseYaml(
    document.toString({ lineWidth: 0, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER }),
  );
}
