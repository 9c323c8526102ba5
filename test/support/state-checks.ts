// What a converged state must pass, read straight from the emulator's data (not through pcsync):
// nothing created twice, every config as the manifest says, nothing outside its scope touched.

import type { EmulatorData, StoredRecord } from "../../src/emulator/index.js";
import type { DesiredState } from "../../src/manifest/index.js";

const live = (data: EmulatorData) => data.records.filter((record) => !record.deleted);

/** Names listed twice in one project and family: a create that happened twice. */
export function duplicateRecords(data: EmulatorData): string[] {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  for (const record of live(data)) {
    const key = `project ${record.project} ${record.family} "${record.name}"`;
    const first = seen.get(key);
    if (first !== undefined) problems.push(`${key}: ids ${first} and ${record.id}`);
    else seen.set(key, record.id);
  }
  return problems;
}

/** Where the stored state differs from the manifest (read straight from the emulator, not through pcsync). */
export function differencesFromManifest(data: EmulatorData, desired: DesiredState): string[] {
  const problems: string[] = [];
  for (const family of desired.families) {
    const records = live(data).filter(
      (record) => String(record.project) === family.project && record.family === family.family,
    );
    const where = `project ${family.project} ${family.family}`;
    for (const config of family.configs) {
      const { fields } = config;
      const matches = records.filter((record) => record.name === fields.name);
      if (matches.length !== 1) {
        problems.push(`${where}: ${matches.length} records named "${fields.name}"`);
        continue;
      }
      const record = matches[0] as StoredRecord;
      const expected: Record<string, unknown> = { plugin: fields.plugin, order: fields.order };
      if (fields.enabled !== undefined) expected.enabled = fields.enabled;
      if (fields.description !== undefined) expected.description = fields.description;
      if (fields.match_action !== undefined) expected.match_action = fields.match_action;
      for (const [field, value] of Object.entries(expected)) {
        const actual = record[field as keyof StoredRecord];
        if (actual !== value)
          problems.push(`${where} "${fields.name}": ${field} is ${String(actual)}, not ${String(value)}`);
      }
    }
    if (family.prune) {
      const wanted = new Set(family.configs.map((config) => config.fields.name));
      for (const record of records) {
        if (!wanted.has(record.name ?? ""))
          problems.push(`${where}: "${record.name}" (id ${record.id}) should be pruned`);
      }
    }
  }
  return problems;
}

/**
 * Records an apply of `desired` may not touch: other projects, families it does not manage, and
 * in a family it manages without prune, the records no config names.
 */
export function recordsOutsideScope(records: readonly StoredRecord[], desired: DesiredState): StoredRecord[] {
  return records.filter((record) => {
    const family = desired.families.find(
      (candidate) => candidate.project === String(record.project) && candidate.family === record.family,
    );
    if (!family) return true;
    if (family.prune) return false;
    return !family.configs.some((config) => config.fields.name === record.name);
  });
}

/** Outside-scope records of `before` that are not exactly the same in `after`. */
export function touchedOutsideScope(
  before: EmulatorData,
  after: EmulatorData,
  desired: DesiredState,
): string[] {
  const now = new Map(after.records.map((record) => [record.id, record]));
  return recordsOutsideScope(before.records, desired).flatMap((record) =>
    JSON.stringify(now.get(record.id)) === JSON.stringify(record)
      ? []
      : [`record ${record.id} ("${record.name}", project ${record.project} ${record.family}) was changed`],
  );
}
