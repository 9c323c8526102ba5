// The reliability tests' scenario: a key, manifests that exercise every kind of change, and
// emulator data with records outside their scope.

import type { EmulatorData } from "../../src/emulator/index.js";
import { type DesiredState, formatDiagnostic, loadManifestSources } from "../../src/manifest/index.js";
import { dataWith } from "./emulator-data.js";

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
  const data = dataWith([
    { id: 6, family: "pipeline_frontend_apps_configs", project: 2, plugin: 41, order: 1, name: "Pineapple" },
  ]);
  data.keys = [{ key: KEY, scopes: null, projects: "*" }];
  data.nextIds.record = 7;
  return data;
}
