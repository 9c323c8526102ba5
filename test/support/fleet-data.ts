// Emulator data for the export of a fleet: projects sharing configs, with names that need YAML
// quoting or hold `${`, in both families. No name has white space at its ends: the real service
// trims those, so they cannot be stored (test/reliability/trimmed-text.test.ts covers them).

import type { EmulatorData } from "../../src/emulator/index.js";
import { dataWith } from "./emulator-data.js";
import { FE, PC } from "./families.js";

const AWKWARD = ["yes", "Cost ${MONTH}", "a: b", "#1", "- dash", "$${literal}"];

/** The example projects 1-3, and a fleet 4-6 sharing configs in both families, awkward names too. */
export function fleetData(): EmulatorData {
  const fleet = [4, 5, 6].flatMap((project) => [
    { project, family: PC, plugin: 1, order: 1, name: "GeoIP" },
    { project, family: PC, plugin: 2, order: 2, name: "Property Filter", description: "Drops ${internal}" },
    ...AWKWARD.map((name, index) => ({ project, family: PC, plugin: 3, order: 3 + index, name })),
    // Another order in project 6: not the same config as in 4 and 5. Its plugin config is a JSON
    // object with an attachment, which posthog-2024 shows as an object and seed as a string.
    {
      project,
      family: PC,
      plugin: 6,
      order: project === 6 ? 20 : 10,
      name: "BigQuery",
      enabled: false,
      config: JSON.stringify({
        datasetId: `events_${project}`,
        tableId: "${TABLE}",
        exportEventsToIgnore: "$identify,$pageview",
        options: { retries: 3, regions: ["eu", null], "a: b": true },
      }),
      attachments: [
        { uid: project, key: "googleCloudKeyJson", name: "key.json", size: 2310, type: "application/json" },
      ],
    },
    { project, family: FE, plugin: 40, order: 1, name: "Notification Bar" },
    ...(project === 5 ? [] : [{ project, family: FE, plugin: 41, order: 2, name: "Pineapple Mode" }]),
  ]);
  const data = dataWith(fleet);
  data.projects.push({ id: 4, name: "Web EU" }, { id: 5, name: "Web US" }, { id: 6, name: "Web staging" });
  return data;
}
