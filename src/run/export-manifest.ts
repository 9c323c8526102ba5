// The export use case: read projects' current state and make the manifest that plans back to it,
// new, merged into an existing manifest (its comments and other projects kept), or as templates.

import { type ApiClient, listProjects } from "../api/index.js";
import {
  buildManifest,
  type ExportOwner,
  type ExportResult,
  exportOwner,
  ownerWarningIn,
  withoutMarkLikeTexts,
} from "../export/build-manifest.js";
import { type FactoredExport, factorTemplates } from "../export/factor-templates.js";
import { locateSecretsInExport } from "../export/locate-secrets.js";
import { ownerOfTarget } from "../export/manifest-target.js";
import {
  type ExportDestination,
  type ResolveText,
  renderNewManifest,
  renderTemplatedManifest,
  updateManifestText,
} from "../export/update-manifest.js";
import type { FamilyName } from "../families.js";
import { listsToRead } from "../family-lists.js";
import { groupBy } from "../group-by.js";
import { InputError } from "../input-error.js";
import { compareText } from "../manifest/compare-projects.js";
import type { CurrentFamily } from "../plan/types.js";
import { readCurrentState } from "../read/read-current-state.js";
import type { SecretRegistry } from "../redact.js";

export interface ExportRequest {
  projects: readonly string[] | "all";
  families: readonly FamilyName[];
  /** Configs that projects share written once. */
  templates: boolean;
  concurrency: number;
}

export interface ExportRead {
  /** Numerically sorted and each once: the output does not depend on flag order. */
  projects: string[];
  results: ExportResult[];
  listsOf: Map<string, CurrentFamily[]>;
  owned: ExportOwner;
  factored: FactoredExport | undefined;
}

export async function readExport(client: ApiClient, request: ExportRequest): Promise<ExportRead> {
  const all = request.projects === "all";
  const listed = all ? (await listProjects(client)).map((project) => String(project.id)) : request.projects;
  if (all && listed.length === 0) throw new InputError("export_no_projects", {});
  const projects = [...new Set(listed)].sort(compareProjectIds);
  const { families } = request;
  // Lists that also show other families' records are read with theirs, to leave those out. Plugin
  // info is read where lists leave it out (posthog-2024): a description that is the plugin's own is left out.
  const toRead = listsToRead(
    projects.flatMap((project) => families.map((family) => ({ project, family, wholeFamily: true }))),
  );
  const withPluginInfo = toRead.map((ref) => ({ ...ref, pluginInfoFor: "all" as const }));
  const read = (await readCurrentState(client, withPluginInfo, { concurrency: request.concurrency }))
    .families;
  // Grouped once: an export of every project reads hundreds of lists.
  const listsOf = groupBy(read, (item) => item.project);
  const built = projects.map((project) => {
    const lists = listsOf.get(project) ?? [];
    return buildManifest({
      project,
      families: lists.filter((item) => families.includes(item.family)),
      otherLists: lists.filter((item) => !families.includes(item.family)),
    });
  });
  // Records that all carry one owner's mark export as that owner's manifest; mixed marks are said,
  // and the manifest, then without owner:, leaves out what only a manifest with one can hold.
  const owned = exportOwner(built);
  const results = owned.owner === undefined ? withoutMarkLikeTexts(built) : built;
  const factored = request.templates ? factorTemplates(results) : undefined;
  return { projects, results, listsOf, owned, factored };
}

// Unlike the manifest's compareProjects, decimal ids do not go first: kept as export has ordered them.
function compareProjectIds(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b)) return a.length - b.length || compareText(a, b);
  return compareText(a, b);
}

export function exportManifestText(exported: ExportRead, destination: ExportDestination): string {
  const { results, factored } = exported;
  return factored
    ? renderTemplatedManifest(factored, results, destination)
    : renderNewManifest(results, destination);
}

/** Its comments, layout and other projects kept. */
export function updateExportedManifest(
  exported: ExportRead,
  text: string,
  file: string,
  options: { resolveText: ResolveText; warn: (message: string) => void },
): string {
  const { owner } = exported.owned;
  return exported.results.reduce(
    (updated, result, index) =>
      updateManifestText(updated, result, file, {
        ...options,
        // Once: the owner is the file's, not a project's (and so is a warning about it).
        ...(owner === undefined || index > 0 ? {} : { owner }),
      }),
    text,
  );
}

/**
 * Into an `existing` file naming its owner: what a plan does with records not all carrying its mark;
 * else why the manifest is written without `owner:`.
 */
export function ownerWarning(
  exported: ExportRead,
  existing?: { text: string; file: string; resolveText: ResolveText },
): string | undefined {
  const fileOwner =
    existing === undefined || exported.owned.owner !== undefined
      ? undefined
      : ownerOfTarget(existing.text, existing.file, existing.resolveText);
  return fileOwner === undefined ? exported.owned.warning : ownerWarningIn(exported.results, fileOwner);
}

/** The text is refused, never redacted. */
export function locateSecretsInRead(exported: ExportRead, secrets: SecretRegistry): string[] {
  return exported.results.flatMap((result) =>
    locateSecretsInExport(result, exported.listsOf.get(result.project) ?? [], secrets),
  );
}
