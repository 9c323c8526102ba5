// Turns the current state of one project into manifest data that plans back to no changes: pure.
// Rendering it as a new file, or merging it into an existing one, is update-manifest.ts's job.

import { descriptionOwner, descriptionText } from "../description-view.js";
import { FAMILY_NAMES, type FamilyName } from "../families.js";
import { idsOfOtherFamilies } from "../family-lists.js";
import { pluginDefaults } from "../filled-defaults.js";
import { groupBy } from "../group-by.js";
import { looksMarked } from "../owner-mark.js";
import { groupTiedOrders, TIE_EFFECT } from "../plan/order-ties.js";
import { lookAlikeKey, unmanifestableName } from "../record-name.js";
import { trimAsService } from "../trim-as-service.js";
import type { PluginConfigRecord } from "../wire-types.js";

interface FamilyList {
  family: FamilyName;
  records: PluginConfigRecord[];
}

interface ExportInput {
  project: string;
  families: FamilyList[];
  /** Read only to leave their records out of the exported lists that also show them (family-lists.ts). */
  otherLists?: FamilyList[];
}

/**
 * Key order is the order written. Every field is written, null ones included: a field left out
 * would not be managed, and a later edit of it not seen as drift.
 */
export interface ExportedConfig {
  name: string;
  id?: number;
  plugin: number;
  enabled: boolean;
  description: string | null;
  match_action: number | null;
  order?: number;
}

export interface ExportedFamily {
  family: FamilyName;
  configs: ExportedConfig[];
}

/** For the manifest's `owner:` (exportOwner). */
interface ExportedMark {
  /** Null: no mark. */
  owner: string | null;
  /** As a warning names it: `"GeoIP" (id 1) in project 1 plugin_configs`. */
  record: string;
}

export interface ExportResult {
  project: string;
  families: ExportedFamily[];
  warnings: string[];
  marks: ExportedMark[];
}

interface Exportable {
  record: PluginConfigRecord;
  name: string;
  /** Its name alone would not find it. */
  pin: boolean;
}

/**
 * Each under a name unique in the family. Of records sharing a name only the lowest id is exported,
 * pinned: new names for the others would make the exported manifest plan renames.
 */
function selectExportable(
  records: readonly PluginConfigRecord[],
  family: FamilyName,
  warnings: string[],
): Exportable[] {
  const byName = groupBy(records, (record) => record.name);
  // The names records have: a name made up for a record must not be one of them.
  const used = new Set(byName.keys());
  const selected: Exportable[] = [];
  for (const record of records) {
    const about = `record ${record.id} in ${family}`;
    const pinnedAs = (name: string, why: string) => {
      used.add(name);
      warnings.push(`${about} ${why}; exported as "${name}" pinned by id (planning it will set that name)`);
      selected.push({ record, name, pin: true });
    };
    if (record.name === null) {
      const name = `${pluginDefaults(record).name ?? `plugin ${record.plugin}`} (config ${record.id})`;
      if (used.has(name))
        warnings.push(`${about} has no name and was left out; give it a name and export again`);
      else pinnedAs(name, "has no name");
      continue;
    }
    const trimmed = trimAsService(record.name);
    // A name no manifest can hold (the schema refuses it, as the service would store it) would
    // make the export fail to plan back. One the service trims to nothing is said below.
    const refused = trimmed === "" && record.name !== "" ? undefined : unmanifestableName(trimmed);
    if (refused !== undefined) {
      warnings.push(
        `${about} is named ${JSON.stringify(record.name)}, which ${trimmed === record.name ? "" : "trimmed as the service trims "}${refused}: a manifest cannot hold that name, so it was left out; rename it and export again`,
      );
      continue;
    }
    if (trimmed !== record.name) {
      // The manifest refuses such a name (manifest/read-manifest-blocks.ts): export the name the service
      // would store, pinned, so that planning it renames the record instead of copying it.
      const why = `is named ${JSON.stringify(record.name)}, with white space at its ends that the service trims`;
      if (trimmed !== "" && !used.has(trimmed)) pinnedAs(trimmed, why);
      else
        warnings.push(
          `${about} ${why}, and ${trimmed === "" ? "nothing is left" : `"${trimmed}" is taken`}: left out; rename it and export again`,
        );
      continue;
    }
    const ids = (byName.get(record.name) ?? []).map((same) => same.id);
    const kept = ids.reduce((lowest, id) => Math.min(lowest, id));
    if (record.id !== kept) continue;
    if (ids.length > 1)
      warnings.push(
        `${ids.length} records in ${family} are named "${record.name}" (ids ${ids.sort((a, b) => a - b).join(", ")}): a name identifies one config, so only id ${kept} is exported, pinned by id; the others are left alone. To manage them, add them with new names and their "id:" (apply renames them).`,
      );
    selected.push({ record, name: record.name, pin: ids.length > 1 });
  }
  return withoutLookAlikes(selected, family, warnings);
}

/**
 * Names that differ only in Unicode normalisation are one name to a manifest, which refuses the
 * second: as for equal names, the lowest id is kept, pinned.
 */
function withoutLookAlikes(selected: Exportable[], family: FamilyName, warnings: string[]): Exportable[] {
  const left = new Set<Exportable>();
  for (const items of groupBy(selected, (item) => lookAlikeKey(item.name)).values()) {
    if (items.length < 2) continue;
    const [kept, ...others] = [...items].sort((a, b) => a.record.id - b.record.id);
    if (kept === undefined) continue;
    kept.pin = true;
    for (const other of others) left.add(other);
    warnings.push(
      `${items.length} records in ${family} have names that differ only in Unicode normalisation (${items.map((item) => `${JSON.stringify(item.record.name)}, id ${item.record.id}`).join("; ")}), which a manifest takes for one name: only id ${kept.record.id} is exported, pinned by id; the others are left alone. To manage them, give them names that differ and export again.`,
    );
  }
  return left.size === 0 ? selected : selected.filter((item) => !left.has(item));
}

export function buildManifest(input: ExportInput): ExportResult {
  const warnings: string[] = [];
  const lists = [...input.families, ...(input.otherLists ?? [])];
  const families: ExportedFamily[] = [];
  const marks: ExportedMark[] = [];

  for (const family of FAMILY_NAMES) {
    const entry = input.families.find((item) => item.family === family);
    if (!entry) continue;
    // A record that another family's list holds too is exported once, under its own family.
    const otherIds = idsOfOtherFamilies(family, lists);
    const listed = entry.records
      .filter((record) => !otherIds.has(record.id))
      .sort((a, b) => a.order - b.order || a.plugin - b.plugin || a.id - b.id);
    // Written as they are (the export must plan back to no changes), but said: see order-ties.ts.
    for (const { order, items } of groupTiedOrders(listed)) {
      const named = items.map(
        (record) => `${record.name === null ? "unnamed" : `"${record.name}"`} (id ${record.id})`,
      );
      warnings.push(
        `records ${named.join(", ")} in ${family} share order ${order}: ${TIE_EFFECT}; exported as they are, give them distinct orders in the manifest to settle it`,
      );
    }
    const records = selectExportable(listed, family, warnings);
    for (const { record, name } of records)
      marks.push({
        owner: descriptionOwner(record.description),
        record: `${JSON.stringify(name)} (id ${record.id}) in project ${input.project} ${family}`,
      });
    const positional = records.every(({ record }, index) => record.order === index + 1);

    const configs = records.map(
      ({ record, name, pin }): ExportedConfig => ({
        name,
        ...(pin ? { id: record.id } : {}),
        plugin: record.plugin,
        enabled: record.enabled,
        description: exportedDescription(record, family, warnings),
        match_action: record.match_action ?? null,
        ...(positional ? {} : { order: record.order }),
      }),
    );
    families.push({ family, configs });
  }

  return {
    project: input.project,
    families,
    warnings: [...new Set(warnings)],
    marks,
  };
}

/**
 * Without an owner mark (it becomes `owner:`). posthog-2024 shows the plugin's own description where
 * the record has none: that is a null description (compare-fields.ts reads it back so).
 */
function exportedDescription(
  record: PluginConfigRecord,
  family: FamilyName,
  warnings: string[],
): string | null {
  const description = descriptionText(record.description);
  // Under an owner mark (an adoption keeps the text it saw) the text is stored: exported as it is.
  const stored = descriptionOwner(record.description) !== null;
  if (typeof description !== "string" || (!stored && description === pluginDefaults(record).description))
    return null;
  // The manifest refuses what the service would trim (manifest/read-manifest-blocks.ts): written trimmed.
  const trimmed = trimAsService(description);
  if (trimmed !== description) {
    warnings.push(
      `record ${record.id} in ${family} has a description with white space at its ends that the service trims; exported trimmed (planning it will set that description)`,
    );
  }
  return trimmed;
}

export interface ExportOwner {
  owner?: string;
  /** Why there is no `owner:` although records carry marks. */
  warning?: string;
}

/** Per owner in a warning. */
const NAMED_RECORDS = 10;

function listRecords(records: readonly string[]): string {
  const named = records.slice(0, NAMED_RECORDS).join(", ");
  const more = records.length - NAMED_RECORDS;
  return more > 0 ? `${named} and ${more} more` : named;
}

/** By the owner whose mark they carry (null: none), each as the warnings name it. */
function recordsByOwner(results: readonly ExportResult[]): Map<string | null, string[]> {
  const byOwner = groupBy(
    results.flatMap((result) => result.marks),
    (mark) => mark.owner,
  );
  return new Map([...byOwner].map(([owner, marks]) => [owner, marks.map((mark) => mark.record)]));
}

/**
 * For a file export -o updates that says `owner: fileOwner`, when exportOwner gives none: a plan
 * adopts the unmarked records for it and refuses another owner's.
 */
export function ownerWarningIn(results: readonly ExportResult[], fileOwner: string): string | undefined {
  const byOwner = recordsByOwner(results);
  const parts = [...byOwner.keys()]
    .filter((owner): owner is string => owner !== null && owner !== fileOwner)
    .sort()
    .map(
      (owner) =>
        `owner ${JSON.stringify(owner)}: ${listRecords(byOwner.get(owner) ?? [])}, which a plan refuses as another owner's (exit 3)`,
    );
  const unmarked = byOwner.get(null);
  if (unmarked !== undefined) {
    const one = unmarked.length === 1;
    parts.unshift(
      `${listRecords(unmarked)} ${one ? "carries" : "carry"} no owner mark: a plan adopts ${one ? "it" : "them"} for owner ${JSON.stringify(fileOwner)} (marks ${one ? "its description" : "their descriptions"})`,
    );
  }
  if (parts.length === 0) return undefined;
  return `the file says owner: ${JSON.stringify(fileOwner)}, which not every exported record carries (${parts.join("; ")}): as it is, it does not plan back to no changes. To keep each record as it is, export those projects to a manifest of their own (one per owner, each with its \`owner:\`, or none for unmarked records)`;
}

/** A manifest without `owner:` refuses a description that ends in an owner mark: left out, saying why. */
export function withoutMarkLikeTexts(results: readonly ExportResult[]): ExportResult[] {
  return results.map((result) => {
    const warnings = [...result.warnings];
    const families = result.families.map((exported) => ({
      ...exported,
      configs: exported.configs.filter((config) => {
        if (typeof config.description !== "string" || !looksMarked(config.description)) return true;
        warnings.push(
          `${JSON.stringify(config.name)} in ${exported.family} has a description that ends in text like an owner mark ("[pcsync owner=NAME]"), which a manifest without \`owner:\` refuses (only pcsync writes one): left out; end its text otherwise, or export it to a manifest of its owner's`,
        );
        return false;
      }),
    }));
    return { ...result, families, warnings };
  });
}

/**
 * The owner whose mark every exported record carries, so that the manifest, applied back, plans no
 * changes and keeps the marks; otherwise none, and a warning.
 */
export function exportOwner(results: readonly ExportResult[]): ExportOwner {
  const byOwner = recordsByOwner(results);
  const owners = [...byOwner.keys()].filter((owner): owner is string => owner !== null);
  if (owners.length === 0) return {};
  const [only] = owners;
  if (owners.length === 1 && only !== undefined && !byOwner.has(null)) return { owner: only };
  const groups = [...owners.sort(), null].flatMap((owner) => {
    const records = byOwner.get(owner);
    if (records === undefined) return [];
    const who = owner === null ? "no owner mark" : `owner ${JSON.stringify(owner)}`;
    return [`${who}: ${listRecords(records)}`];
  });
  return {
    warning: `the exported records carry different owner marks (${groups.join("; ")}): the manifest is written without \`owner:\` (as it is, it plans no changes; a description it changes later loses its mark). To keep the marks, split it into one manifest per owner, each with its \`owner:\``,
  };
}
