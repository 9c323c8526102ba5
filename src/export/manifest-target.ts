// Whether an existing file that `export -o` would update is a pcsync manifest. Only a manifest is
// changed: any other YAML (a compose file, a list, an empty file) is refused, and left byte for byte.

import { InputError } from "../input-error.js";
import type { ManifestDocument } from "../manifest/index.js";
import { type Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap } from "../vendor/yaml.js";

/** The compiler holds this list to the schema's type, so a key the schema gains cannot be missed. */
const MANIFEST_KEYS: ReadonlySet<string> = new Set(
  Object.keys({
    version: true,
    server: true,
    owner: true,
    rollout: true,
    templates: true,
    project_sets: true,
    projects: true,
  } satisfies Record<keyof ManifestDocument, true>),
);

const REMEDY = "export -o updates only a pcsync manifest (`version: 1`, `projects:`); choose a new file";

function notAManifest(document: Document): string | undefined {
  const contents = document.contents;
  if (contents === null || (isScalar(contents) && contents.value === null)) return "it holds no YAML data";
  if (isSeq(contents)) return "its top level is a list, not a mapping";
  if (!isMap(contents)) return "its top level is not a mapping";
  const keys = contents.items.map(({ key }) => String(isScalar(key) ? key.value : key));
  const foreign = keys.filter((key) => !MANIFEST_KEYS.has(key));
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 5).map((key) => JSON.stringify(key));
    return `it has top-level ${foreign.length === 1 ? "key" : "keys"} ${shown.join(", ")}${foreign.length > 5 ? " and more" : ""}, which a manifest does not`;
  }
  const version = contents.get("version", true);
  if (version === undefined) return "it has no `version: 1`";
  if (!isScalar(version) || version.value !== 1)
    return `its version is ${isScalar(version) ? JSON.stringify(version.value) : "not a number"}, not 1`;
  return undefined;
}

/** Text that is not YAML, or not a pcsync manifest, is refused (export_target_invalid, exit 1). */
export function parseManifestTarget(text: string, fileName: string): { document: Document; root: YAMLMap } {
  const document = parseDocument(text, { keepSourceTokens: true });
  if (document.errors.length > 0) {
    throw new InputError("export_target_invalid", {
      file: fileName,
      problem: `is not valid YAML (${document.errors[0]?.message.split("\n")[0]}); fix it, or export to a new file`,
    });
  }
  const problem = notAManifest(document);
  if (problem === undefined && isMap(document.contents)) return { document, root: document.contents };
  throw new InputError("export_target_invalid", {
    file: fileName,
    problem: `is not a pcsync manifest (${problem ?? "its top level is not a mapping"}); it was left as it is. ${REMEDY}, or remove ${fileName} first`,
  });
}

/** Interpolated (`owner: ${OWNER}`) with the variables plan would use; undefined when unknown. */
export function ownerOfTarget(
  text: string,
  fileName: string,
  resolveText: (text: string) => string | undefined,
): string | undefined {
  const owner = parseManifestTarget(text, fileName).root.get("owner");
  return typeof owner === "string" ? resolveText(owner) : undefined;
}
