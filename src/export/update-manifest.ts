// Writes exported manifest data as a new file, or merged into an existing manifest so that its
// comments, key order and layout survive (yaml's Document API edits the parsed tree in place).

import { InputError } from "../input-error.js";
import { needsYamlEscapes, neutraliseYaml } from "../neutralise-server-text.js";
import { Document, isMap, isScalar, isSeq, Scalar, visit, type YAMLMap, YAMLSeq } from "../vendor/yaml.js";
import {
  type ExportedConfig,
  type ExportedFamily,
  type ExportResult,
  exportOwner,
} from "./build-manifest.js";
import type { FactoredExport } from "./factor-templates.js";
import { parseManifestTarget } from "./manifest-target.js";

const FLEET_KEYS = ["templates", "project_sets"] as const;

/** An existing config's key among these that the export leaves out is removed. */
const EXPORTED_FIELDS = ["name", "id", "plugin", "enabled", "description", "match_action", "order"] as const;

/** A regular file gets the exact text, anything else is printed. */
export type ExportDestination = "file" | "display";

/** Each project written out in full. */
export function renderNewManifest(
  results: readonly ExportResult[],
  destination: ExportDestination = "file",
): string {
  const projects = Object.fromEntries(
    results.map((result) => [result.project, familyBlocks(result.families, { prune: false })]),
  );
  const comment = ` prune is false: records added
 remotely are left alone until you set prune: true.`;
  return newManifest(results, { projects }, comment, destination);
}

export function renderTemplatedManifest(
  factored: FactoredExport,
  results: readonly ExportResult[],
  destination: ExportDestination = "file",
): string {
  const templates = Object.fromEntries(
    factored.templates.map((template) => [template.name, familyBlocks(template.families)]),
  );
  const projects = Object.fromEntries(
    factored.projects.map((project) => [
      project.project,
      { ...(project.use.length > 0 ? { use: project.use } : {}), ...familyBlocks(project.families) },
    ]),
  );
  const comment = ` Configs that several projects share are in templates;
 a project uses them, then lists its own. prune is false (the default): records added remotely
 are left alone until you set prune: true.`;
  const fleet = factored.templates.length > 0 ? { templates, projects } : { projects };
  return newManifest(results, fleet, comment, destination);
}

function familyBlocks(families: readonly ExportedFamily[], settings: object = {}): Record<string, unknown> {
  return Object.fromEntries(
    families.map((family) => [family.family, { ...settings, configs: family.configs.map(escapeConfig) }]),
  );
}

function newManifest(
  results: readonly ExportResult[],
  contents: { projects: Record<string, unknown> },
  comment: string,
  destination: ExportDestination,
): string {
  const { owner } = exportOwner(results);
  const document = new Document({ version: 1, ...(owner === undefined ? {} : { owner }), ...contents });
  // `use: [shared-1, shared-2]` on one line: a project's list of templates reads like a sentence.
  for (const project of Object.keys(contents.projects)) {
    const use = document.getIn(["projects", project, "use"], true);
    if (isSeq(use)) use.flow = true;
  }
  const [only] = results;
  const by = results.length === 1 && only ? `--project ${only.project}` : `(${results.length} projects)`;
  document.commentBefore = ` Exported by pcsync export ${by}.${comment}`;
  return exportText(document, destination);
}

/**
 * Printed (a terminal, a CI log, a device given to -o), server text that a terminal or CI runner would
 * act on is written as YAML escapes (neutralise-server-text.ts); a file gets it byte for byte.
 */
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

/** `${` starts a variable reference in a manifest, so a literal one is written `$${`. */
function escapeInterpolation(text: string): string {
  // A function, not a string: in a replacement string `$$` would stand for one `$`.
  return text.replaceAll("${", () => "$${");
}

function escapeConfig(config: ExportedConfig): ExportedConfig {
  return {
    ...config,
    name: escapeInterpolation(config.name),
    description: config.description === null ? null : escapeInterpolation(config.description),
  };
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

/** What a manifest text means after `${NAME}` interpolation, with the variables plan would use. */
export type ResolveText = (text: string) => string | undefined;

const WITHOUT_VARIABLES: ResolveText = (text) => (text.includes("${") ? undefined : text);

/** As written, or once interpolated, so that `plugin: ${PLUGIN_ID}` survives an export that agrees. */
function sameValue(node: unknown, value: unknown, resolveText: ResolveText): boolean {
  const current = scalarValue(node);
  // Text holding `${` means what it interpolates to, even when it equals the value as written.
  if (typeof current !== "string" || !current.includes("${")) return current === value;
  const text = resolveText(current);
  if (text === undefined) return false;
  if (typeof value === "string") return text === value;
  const trimmed = text.trim();
  if (typeof value === "number") return /^[+-]?\d+$/.test(trimmed) && Number(trimmed) === value;
  if (typeof value === "boolean") return trimmed === String(value);
  return false;
}

function updateConfigNode(
  node: YAMLMap,
  config: ExportedConfig,
  document: Document,
  resolveText: ResolveText,
): void {
  for (const field of EXPORTED_FIELDS) {
    const value = config[field];
    if (value === undefined) node.delete(field);
    else if (!sameValue(node.get(field, true), value, resolveText))
      node.set(field, document.createNode(typeof value === "string" ? escapeInterpolation(value) : value));
  }
}

function childMap(parent: YAMLMap, key: string, document: Document, initial: object = {}): YAMLMap {
  const node = parent.get(key, true);
  if (isMap(node)) return node;
  const created = document.createNode(initial);
  parent.set(key, created);
  return created as YAMLMap;
}

/** A key that interpolates to the id (`"${PROJECT_ID:-1}"`) keeps its spelling. */
function projectMap(
  projects: YAMLMap,
  project: string,
  document: Document,
  resolveText: ResolveText,
  warn: (message: string) => void,
): YAMLMap {
  for (const pair of projects.items) {
    if (!isScalar(pair.key) || !isMap(pair.value)) continue;
    const key = String(pair.key.value);
    if (key === project) return pair.value;
    if (!key.includes("${")) continue;
    const resolved = resolveText(key);
    if (resolved === project) return pair.value;
    if (resolved === undefined) {
      warn(
        `project key "${key}" cannot be interpolated (a variable is not set), so it is not matched with project ${project}; pass the PCSYNC_VAR_*, --var or --var-file that plan uses`,
      );
    }
  }
  return childMap(projects, project, document);
}

interface UpdateOptions {
  /** Without it, only literal text matches. */
  resolveText?: ResolveText;
  warn?: (message: string) => void;
  /** From exportOwner, written when missing. */
  owner?: string;
}

/** Added after `version:` when missing; one that names another owner is the user's and stays. */
function setOwner(
  document: Document,
  contents: YAMLMap,
  owner: string,
  warn: (message: string) => void,
  resolveText: ResolveText,
): void {
  const current = contents.get("owner", true);
  if (current === undefined) {
    const after = contents.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === "version");
    contents.items.splice(after + 1, 0, document.createPair("owner", owner));
    return;
  }
  // `owner: ${OWNER}` says what it interpolates to, with the variables plan would use.
  if (!sameValue(current, owner, resolveText))
    warn(
      `says owner: ${JSON.stringify(scalarValue(current))}, but the exported records carry the mark of owner ${JSON.stringify(owner)}; owner: is left as it is; plan refuses those records as another owner's until it names theirs`,
    );
}

/** Keeps comments and layout. */
export function updateManifestText(
  text: string,
  result: ExportResult,
  fileName: string,
  options: UpdateOptions = {},
): string {
  const resolveText = options.resolveText ?? WITHOUT_VARIABLES;
  // Only a pcsync manifest is updated: a compose file or any other YAML is refused, untouched.
  const { document, root } = parseManifestTarget(text, fileName);
  // A templated config written out beside its template would be the same name twice; where a
  // remote change belongs (the template, an override, the project) is the user's choice.
  const fleetKeys = FLEET_KEYS.filter((key) => document.has(key));
  if (fleetKeys.length > 0) {
    throw new InputError("export_target_fleet", { file: fileName, keys: fleetKeys });
  }
  if (!document.has("version")) document.set("version", 1);
  const warn = (message: string) => options.warn?.(`${fileName}: ${message}`);
  if (options.owner !== undefined) setOwner(document, root, options.owner, warn, resolveText);
  const projects = childMap(root, "projects", document);
  const block = projectMap(projects, result.project, document, resolveText, warn);

  for (const family of result.families) {
    const blockMap = childMap(block, family.family, document, { prune: false, configs: [] });
    // A `configs:` that is missing or not a list is replaced.
    const listed = blockMap.get("configs", true);
    const seq = isSeq(listed) ? listed : new YAMLSeq();
    blockMap.set("configs", seq);
    const existing = seq.items.filter((item): item is YAMLMap => isMap(item));
    const used = new Set<YAMLMap>();
    const unusedWith = (field: "id" | "name", value: unknown) =>
      existing.find((item) => !used.has(item) && sameValue(item.get(field, true), value, resolveText));
    // The new sequence is in the remote order (list position may be the order); existing items
    // keep their comments and key order, records that are gone are dropped.
    seq.items = family.configs.map((config) => {
      const node =
        (config.id === undefined ? undefined : unusedWith("id", config.id)) ??
        unusedWith("name", config.name);
      if (!node) return document.createNode(escapeConfig(config));
      used.add(node);
      updateConfigNode(node, config, document, resolveText);
      return node;
    });
  }
  return document.toString({ lineWidth: 0 });
}
