// Small builders for desired and current state, shared by the planner's and apply's tests.

import { createConfigDetailed } from "../../src/apply/create-config.js";
import type { FamilyName } from "../../src/families.js";
import type { DesiredConfig, DesiredFamily, DesiredFields } from "../../src/manifest/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";

export function remoteRecord(fields: Partial<PluginConfigRecord> & { id: number }): PluginConfigRecord {
  return {
    plugin: 1,
    enabled: false,
    order: 1,
    name: null,
    description: null,
    deleted: false,
    match_action: null,
    ...fields,
  };
}

let nextLine = 1;

export function desiredConfig(
  fields: Partial<DesiredFields> & { name: string },
  options: { id?: number; line?: number } = {},
): DesiredConfig {
  const line = options.line ?? nextLine++;
  return {
    ...(options.id === undefined ? {} : { id: options.id }),
    fields: { plugin: 1, order: 1, ...fields },
    source: { file: "pcsync.yaml", line, col: 7 },
    fieldSources: {},
  };
}

export function desiredFamily(
  project: string,
  family: FamilyName,
  configs: DesiredConfig[],
  options: { prune?: boolean; explicitOrder?: boolean } = {},
): DesiredFamily {
  return {
    project,
    family,
    prune: options.prune ?? false,
    explicitOrder: options.explicitOrder ?? false,
    configs,
    source: { file: "pcsync.yaml", line: 3, col: 5 },
  };
}

/** Creates a record by apply's rule (createConfigDetailed) and gives the record alone. */
export async function createRecord(
  ...args: Parameters<typeof createConfigDetailed>
): Promise<PluginConfigRecord> {
  return (await createConfigDetailed(...args)).record;
}
