// Shared by the reliability tests: manifests that exercise every kind of change, emulator data with
// records outside their scope, an in-process apply, and the checks a converged state must pass.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApiClient } from "../../src/api/index.js";
import { type ApplyOptions, applyPlan } from "../../src/apply/apply-plan.js";
import type { ApplyReport } from "../../src/apply/types.js";
import { type EmulatorData, exampleData, type StoredRecord } from "../../src/emulator/index.js";
import { type DesiredState, formatDiagnostic, loadManifestSources } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { Plan } from "../../src/plan/types.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";

/** The API key of every reliability test: `+`, `/` and `=` make its URL and base64 forms differ. */
export const KEY = "phx_Reliability+Key/0123456789=abcdefXYZ";

/** Prunes plugin_configs (deletes, creates, updates, reorders) and keeps two frontend apps. */
export const MANIFEST_A = `version: 1
projects:
  "1":
    plugin_configs:
      prune: true
      configs:
        - name: GeoIP
          plugin: 1
          enabled: true
          description: Adds the country
        - name: Taxonomy
          plugin: 3
          enabled: true
        - name: S3 Export
          plugin: 5
          enabled: false
          match_action: 2
        - name: BigQuery
          plugin: 6
          enabled: true
    pipeline_frontend_apps_configs:
      configs:
        - name: Pineapple
          plugin: 41
          enabled: true
        - name: Bug Report
          plugin: 42
`;

/** Other members, other orders and values, both families. */
export const MANIFEST_B = `version: 1
projects:
  "1":
    plugin_configs:
      prune: true
      configs:
        - name: Taxonomy
          plugin: 3
          enabled: false
          description: Renames events
        - name: GeoIP
          plugin: 1
          enabled: true
          description: null
        - name: Customer.io
          plugin: 4
          enabled: true
        - name: Unduplicator
          plugin: 8
          enabled: true
        - name: S3 Export
          plugin: 5
          enabled: true
          match_action: null
    pipeline_frontend_apps_configs:
      configs:
        - name: Bug Report
          plugin: 42
          enabled: true
        - name: Pineapple
          plugin: 41
          enabled: false
`;

/** No prune and explicit orders: what the earlier rounds left over must stay as it is. */
export const MANIFEST_C = `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: 1
          enabled: false
          order: 5
        - name: First Time
          plugin: 7
          enabled: true
          order: 1
        - name: Taxonomy
          plugin: 3
          order: 2
        - name: Property Filter
          plugin: 2
          enabled: true
          description: Drops $ip
          order: 3
`;

export const MANIFESTS = [MANIFEST_A, MANIFEST_B, MANIFEST_C] as const;

export function loadDesired(text: string): DesiredState {
  const loaded = loadManifestSources([{ file: "pcsync.yaml", text }]);
  if (!loaded.value) throw new Error(loaded.errors.map(formatDiagnostic).join("\n"));
  return loaded.value;
}

/** The example data with the test key (unscoped, so posthog-2024 lets it rearrange) and more records outside project 1. */
export function reliabilityData(): EmulatorData {
  const data = exampleData();
  data.keys = [{ key: KEY, scopes: null, projects: "*" }];
  const stamp = "2024-06-01T00:00:00.000Z";
  data.records.push({
    id: 6,
    family: "pipeline_frontend_apps_configs",
    project: 2,
    plugin: 41,
    enabled: true,
    order: 1,
    name: "Pineapple",
    description: null,
    deleted: false,
    match_action: null,
    config: "{}",
    error: null,
    delivery_rate_24h: null,
    created_at: stamp,
    updated_at: stamp,
  });
  data.nextIds = { record: 7 };
  return data;
}

/** Reads, plans and applies in-process, as `pcsync apply` does. */
export async function applyOnce(
  client: ApiClient,
  desired: DesiredState,
  options: Partial<ApplyOptions> = {},
): Promise<{ plan: Plan; report: ApplyReport }> {
  const refs = listsToPlan(desired);
  const current = await readCurrentState(client, refs, { concurrency: 2 });
  const { plan, errors } = computePlan(desired, current);
  if (!plan) throw new Error(`plan refused: ${errors.map((error) => error.message).join("; ")}`);
  if (plan.guards.length > 0)
    throw new Error(`guards: ${plan.guards.map((guard) => guard.message).join("; ")}`);
  const report = await applyPlan(client, plan, current, { concurrency: 2, ...options });
  return { plan, report };
}

/** What a fresh plan would change: empty when the state has converged. */
export async function pendingChanges(client: ApiClient, desired: DesiredState): Promise<string[]> {
  const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
  const { plan, errors } = computePlan(desired, current);
  if (!plan) return errors.map((error) => `plan error: ${error.message}`);
  return [
    ...plan.changes.map((change) => `${change.action} ${change.family} ${change.name} (id ${change.id})`),
    ...plan.reorders.flatMap((reorder) =>
      reorder.moves.map((move) => `move ${reorder.family} ${move.name} ${move.from} -> ${move.to}`),
    ),
  ];
}

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

/** A fresh temporary directory, removed by the returned function. */
export async function temporaryDirectory(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "pcsync-reliability-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export async function writeManifest(directory: string, text: string, name = "pcsync.yaml"): Promise<string> {
  const file = join(directory, name);
  await writeFile(file, text, "utf8");
  return file;
}

/** A small seeded PRNG (mulberry32), so a failing random schedule can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
