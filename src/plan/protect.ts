// Refuses deleting a record a family's `protect:` or a `protect: true` config matches, unless
// --allow-destroy names it; apply checks again with the names the service shows then.

import { ofFamily } from "../families.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { DesiredFamily } from "../manifest/types.js";
import { compileNameGlob, matchesAnyGlob, sameName } from "../record-name.js";
import { recordKey } from "./fingerprint.js";
import type {
  CurrentState,
  GuardViolation,
  Plan,
  PlannedChange,
  ProtectEntry,
  ProtectedFinding,
} from "./types.js";

export function protectEntries(
  family: DesiredFamily,
  claimedNames: ReadonlyMap<object, string | null>,
): ProtectEntry[] {
  const entries: ProtectEntry[] = (family.protect ?? []).map(({ pattern, source }) => ({
    pattern,
    source: formatSource(source),
  }));
  for (const config of family.configs) {
    if (config.fields.protect !== true) continue;
    const source = formatSource(config.fieldSources.protect ?? config.source);
    entries.push({ pattern: config.fields.name, source, exact: true });
    // A config pinned by id protects its record under the name the service shows too.
    const shown = claimedNames.get(config);
    if (shown !== undefined && shown !== null && shown !== config.fields.name)
      entries.push({ pattern: shown, source, exact: true });
  }
  return entries;
}

/** `nameOf`: the record's name as the service shows it (the change's, by default). */
export function findProtectedDeletes(
  where: { project: string; family: DesiredFamily["family"]; source: string },
  changes: readonly PlannedChange[],
  protect: readonly ProtectEntry[],
  allowDestroy: readonly string[],
  nameOf: (change: PlannedChange) => string | null = (change) => change.name,
): ProtectedFinding | undefined {
  if (protect.length === 0) return undefined;
  const allowed = matchesAnyGlob(allowDestroy);
  const globs = protect.map((entry) => ({
    entry,
    matches:
      entry.exact === true
        ? (name: string | null) => sameName(name, entry.pattern)
        : compileNameGlob(entry.pattern),
  }));
  const records: ProtectedFinding["records"] = [];
  for (const change of changes) {
    if (change.action !== "delete" || change.id === null) continue;
    const name = nameOf(change);
    const protectedBy = globs.find(({ matches }) => matches(name))?.entry;
    if (protectedBy === undefined || allowed(name)) continue;
    records.push({ id: change.id, name, protectedBy });
  }
  return records.length === 0 ? undefined : { rule: "protected", ...where, records };
}

/** Replaces the plan's own protection guards, naming records as shown now: a hand edit or rename meets the same rule. */
export function recheckProtection(
  plan: Plan,
  current: CurrentState,
  allowDestroy: readonly string[],
): GuardViolation[] {
  const names = new Map<string, string | null>();
  for (const family of current.families) {
    for (const record of family.records)
      names.set(recordKey(family.project, family.family, record.id), record.name);
  }
  const guards: GuardViolation[] = [];
  for (const report of plan.families) {
    const { project, family } = report;
    const deletes = plan.changes
      .filter(ofFamily(project, family))
      .filter((change) => change.action === "delete");
    const finding = findProtectedDeletes(
      { project, family, source: deletes[0]?.source ?? "" },
      deletes,
      report.protect ?? [],
      allowDestroy,
      (change) =>
        change.id === null ? change.name : (names.get(recordKey(project, family, change.id)) ?? change.name),
    );
    if (finding !== undefined) guards.push(finding);
  }
  return guards;
}
