// Synthetic fleets for the benchmark: emulator data of N projects x 2 families x M records, and a
// desired state that either matches it (plan scenarios) or asks for a known number of changes.

import type { EmulatorData, PluginData, StoredRecord } from "../src/emulator/index.js";
import { FAMILY_NAMES, type FamilyName } from "../src/families.js";
import type { DesiredConfig, DesiredFamily, DesiredState } from "../src/manifest/types.js";

export const BENCH_API_KEY = "phx_bench_0123456789abcdef0123456789abcdef";

// Server plugins for plugin_configs, frontend apps for the other family, so that the families
// are also disjoint on posthog-2024 servers (where plugin_configs lists frontend apps as well).
const SERVER_PLUGINS = 20;
const FRONTEND_PLUGINS = 20;
// Record ids start above every plugin id: a rearrange keyed by config id can then never be read
// as plugin ids (apply checks that before it uses rearrange).
const FIRST_RECORD_ID = 10_001;
const TIMESTAMP = "2024-06-01T12:00:00.000Z";

export interface FleetShape {
  projects: number;
  recordsPerFamily: number;
}

/** What the desired state asks of each family, in records (each a change), out of recordsPerFamily. */
export interface ChangeMix {
  updates: number;
  deletes: number;
  creates: number;
  /**
   * Creates go first in the list (every kept record moves: one rearrange per family), or last (no
   * record moves, for servers where reorders take a PATCH per record).
   */
  createsAt: "start" | "end";
}

export const NO_CHANGES: ChangeMix = { updates: 0, deletes: 0, creates: 0, createsAt: "end" };

export interface Fleet {
  shape: FleetShape;
  /** Handed to the emulator, then dropped (see `takeData`): the emulator keeps its own copy. */
  data: EmulatorData | undefined;
  desired: DesiredState;
  /** Records per family as listed (for the minimum number of list requests). */
  familySizes: number[];
  /** Writes the plan must make at least: creates + updates + deletes, and one rearrange per reordered family. */
  expected: { changes: number; reorderedFamilies: number };
}

function plugins(): PluginData[] {
  const list: PluginData[] = [];
  for (let id = 1; id <= SERVER_PLUGINS + FRONTEND_PLUGINS; id += 1) {
    const frontendApp = id > SERVER_PLUGINS;
    list.push({
      id,
      name: `Plugin ${id}`,
      description: `Benchmark plugin ${id}`,
      capabilities: frontendApp
        ? { methods: [], scheduled_tasks: [] }
        : { methods: ["processEvent"], scheduled_tasks: [] },
      frontendApp,
    });
  }
  return list;
}

function pluginFor(family: FamilyName, index: number): number {
  const offset = family === "plugin_configs" ? 0 : SERVER_PLUGINS;
  return offset + 1 + (index % SERVER_PLUGINS);
}

function recordName(project: number, family: FamilyName, index: number): string {
  return `p${project}-${family === "plugin_configs" ? "pc" : "fe"}-${index}`;
}

function desiredConfig(fields: DesiredConfig["fields"], project: number, line: number): DesiredConfig {
  return {
    fields,
    source: { file: `bench/${project}.yaml`, line, col: 7 },
    fieldSources: {},
  };
}

/**
 * Builds the fleet. With `mix`, each family of the desired state updates the first `updates`
 * records (enabled flipped), prunes the last `deletes`, and adds `creates` new ones.
 */
export function buildFleet(shape: FleetShape, mix: ChangeMix = NO_CHANGES): Fleet {
  const records: StoredRecord[] = [];
  const families: DesiredFamily[] = [];
  let nextId = FIRST_RECORD_ID;
  const { recordsPerFamily } = shape;
  if (mix.updates + mix.deletes > recordsPerFamily) throw new RangeError("change mix larger than a family");
  let reorderedFamilies = 0;

  for (let project = 1; project <= shape.projects; project += 1) {
    for (const family of FAMILY_NAMES) {
      const remote: StoredRecord[] = [];
      for (let index = 0; index < recordsPerFamily; index += 1) {
        remote.push({
          id: nextId++,
          family,
          project,
          plugin: pluginFor(family, index),
          enabled: index % 2 === 0,
          order: index + 1,
          name: recordName(project, family, index),
          description: null,
          deleted: false,
          match_action: null,
          config: "{}",
          error: null,
          delivery_rate_24h: null,
          created_at: TIMESTAMP,
          updated_at: TIMESTAMP,
        });
      }
      records.push(...remote);

      const kept = remote.slice(0, recordsPerFamily - mix.deletes);
      const keptConfigs = kept.map((record, index) => ({
        plugin: record.plugin,
        name: record.name ?? "",
        enabled: index < mix.updates ? !record.enabled : record.enabled,
      }));
      const createdConfigs = Array.from({ length: mix.creates }, (_, index) => ({
        plugin: pluginFor(family, index),
        name: recordName(project, family, recordsPerFamily + index),
        enabled: true,
      }));
      const ordered =
        mix.createsAt === "start" ? [...createdConfigs, ...keptConfigs] : [...keptConfigs, ...createdConfigs];
      if (mix.creates > 0 && mix.createsAt === "start" && kept.length > 0) reorderedFamilies += 1;
      families.push({
        project: String(project),
        family,
        prune: mix.deletes > 0,
        explicitOrder: false,
        configs: ordered.map((fields, index) =>
          desiredConfig({ ...fields, order: index + 1 }, project, 10 + index * 4),
        ),
        source: { file: `bench/${project}.yaml`, line: 4, col: 5 },
      });
    }
  }

  const familyCount = shape.projects * FAMILY_NAMES.length;
  return {
    shape,
    data: {
      version: 1,
      plugins: plugins(),
      projects: Array.from({ length: shape.projects }, (_, index) => ({
        id: index + 1,
        name: `Project ${index + 1}`,
      })),
      // Unscoped (legacy) key: posthog-2024 servers refuse scoped keys on rearrange.
      keys: [{ key: BENCH_API_KEY, scopes: null, projects: "*", label: "benchmark" }],
      records,
      logEntries: [],
      nextIds: { record: nextId },
    },
    desired: { families },
    familySizes: Array.from({ length: familyCount }, () => recordsPerFamily),
    expected: {
      changes: familyCount * (mix.updates + mix.deletes + mix.creates),
      reorderedFamilies,
    },
  };
}

/** The fleet's emulator data, once: the benchmark's copy is dropped so that peak RSS is about pcsync. */
export function takeData(fleet: Fleet): EmulatorData {
  const { data } = fleet;
  if (!data) throw new Error("the fleet's data was already handed to an emulator");
  fleet.data = undefined;
  return data;
}
