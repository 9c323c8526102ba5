// Writes exported manifest data: as a new file, or merged into an existing manifest so that its
// comments, key order and layout survive (yaml's Document API edits the parsed tree in place).

import { Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap, YAMLSeq } from "yaml";
import { PcsyncError } from "../errors.js";
import type { ExportedConfig, ExportResult } from "./build-manifest.js";

/** The fields export writes; an existing config's key among these that the export leaves out is removed. */
const EXPORTED_FIELDS = ["name", "id", "plugin", "enabled", "description", "match_action", "order"] as const;

export function renderNewManifest(result: ExportResult): string {
  const projectBlock: Record<string, unknown> = {};
  for (const family of result.families)
    projectBlock[family.family] = { prune: false, configs: family.configs };
  const document = new Document({ version: 1, projects: { [result.project]: projectBlock } });
  document.commentBefore = ` Exported by pcsync export --project ${result.project}. prune is false: records added
 remotely are left alone until you set prune: true.`;
  return document.toString({ lineWidth: 0 });
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

/** Updates one existing config map in place: changed values replaced, stale managed keys removed. */
function updateConfigNode(node: YAMLMap, config: ExportedConfig, document: Document): void {
  for (const field of EXPORTED_FIELDS) {
    const value = config[field];
    if (value === undefined) {
      if (node.has(field)) node.delete(field);
    } else if (scalarValue(node.get(field, true)) !== value) {
      node.set(field, document.createNode(value));
    }
  }
}

/** The mapping under `key`, created (as `initial`) when missing or not a mapping. */
function childMap(parent: YAMLMap, key: string, document: Document, initial: object = {}): YAMLMap {
  const node = parent.get(key, true);
  if (isMap(node)) return node;
  const created = document.createNode(initial);
  parent.set(key, created);
  return created as YAMLMap;
}

function childSeq(parent: YAMLMap, key: string): YAMLSeq {
  const node = parent.get(key, true);
  if (isSeq(node)) return node;
  const created = new YAMLSeq();
  parent.set(key, created);
  return created;
}

/** Merges the export of one project into an existing manifest's text, keeping comments and layout. */
export function updateManifestText(text: string, result: ExportResult, fileName: string): string {
  const document = parseDocument(text, { keepSourceTokens: true });
  if (document.errors.length > 0) {
    throw new PcsyncError(
      "export_target_invalid",
      `${fileName} is not valid YAML (${document.errors[0]?.message.split("\n")[0]}); fix it, or export to a new file`,
    );
  }
  if (!isMap(document.contents)) {
    throw new PcsyncError(
      "export_target_invalid",
      `${fileName} is not a pcsync manifest (its top level is not a mapping)`,
    );
  }
  if (!document.has("version")) document.set("version", 1);
  const projectMap = childMap(childMap(document.contents, "projects", document), result.project, document);

  for (const family of result.families) {
    const blockMap = childMap(projectMap, family.family, document, { prune: false, configs: [] });
    const seq = childSeq(blockMap, "configs");
    const existing = seq.items.filter((item): item is YAMLMap => isMap(item));
    const used = new Set<YAMLMap>();
    const take = (config: ExportedConfig): YAMLMap | undefined => {
      const match =
        (config.id === undefined
          ? undefined
          : existing.find((item) => !used.has(item) && scalarValue(item.get("id", true)) === config.id)) ??
        existing.find((item) => !used.has(item) && scalarValue(item.get("name", true)) === config.name);
      if (match) used.add(match);
      return match;
    };
    // The new sequence is in the remote order (list position may be the order); existing items
    // keep their comments and key order, records that are gone are dropped.
    seq.items = family.configs.map((config) => {
      const node = take(config);
      if (!node) return document.createNode(config);
      updateConfigNode(node, config, document);
      return node;
    });
  }
  return document.toString({ lineWidth: 0 });
}
