// Writes factored export data (factor-templates.ts) as a new manifest: `templates:`, then each
// project's `use:` and own configs, in the fleet syntax the manifest loader expands.

import { Document, isSeq } from "../vendor/yaml.js";
import type { ExportedFamily, ExportResult } from "./build-manifest.js";
import { type ExportDestination, exportText } from "./display-yaml.js";
import { escapeConfig } from "./escape-text.js";
import { exportOwner } from "./export-owner.js";
import type { FactoredExport } from "./factor-templates.js";
import { exportedBy } from "./update-manifest.js";

function familyBlocks(families: readonly ExportedFamily[]): Record<string, unknown> {
  return Object.fromEntries(
    families.map((family) => [family.family, { configs: family.configs.map(escapeConfig) }]),
  );
}

export function renderTemplatedManifest(
  factored: FactoredExport,
  results: readonly ExportResult[],
  destination: ExportDestination = "file",
): string {
  const contents: Record<string, unknown> = { version: 1 };
  // The owner whose mark every record carries (export-owner.ts): it plans back to no changes.
  const { owner } = exportOwner(results);
  if (owner !== undefined) contents.owner = owner;
  if (factored.templates.length > 0) {
    contents.templates = Object.fromEntries(
      factored.templates.map((template) => [template.name, familyBlocks(template.families)]),
    );
  }
  contents.projects = Object.fromEntries(
    factored.projects.map((project) => [
      project.project,
      { ...(project.use.length > 0 ? { use: project.use } : {}), ...familyBlocks(project.families) },
    ]),
  );
  const document = new Document(contents);
  // `use: [shared-1, shared-2]` on one line: a project's list of templates reads like a sentence.
  for (const project of factored.projects) {
    const use = document.getIn(["projects", project.project, "use"], true);
    if (isSeq(use)) use.flow = true;
  }
  document.commentBefore = `${exportedBy(results)} Configs that several projects share are in templates;
 a project uses them, then lists its own. prune is false (the default): records added remotely
 are left alone until you set prune: true.`;
  return exportText(document, destination);
}
