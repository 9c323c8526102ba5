// Where an export holds the text of a registered secret (the API key), by record and field, never the
// value: an exported manifest must plan back to the state read, so it is refused rather than redacted.

import type { PluginConfigRecord } from "../api/index.js";
import type { FamilyName } from "../families.js";
import { nounAndList } from "../plural.js";
import { locateSecrets, type SecretRegistry } from "../redact.js";
import type { ExportResult } from "./build-manifest.js";

export function locateSecretsInExport(
  result: ExportResult,
  read: ReadonlyArray<{ family: FamilyName; records: readonly PluginConfigRecord[] }>,
  secrets: SecretRegistry,
): string[] {
  const places: string[] = [];
  if (locateSecrets(result.project, secrets).length > 0) places.push("the project id");
  for (const family of result.families) {
    const records = read.find((item) => item.family === family.family)?.records ?? [];
    for (const config of family.configs) {
      const fields = [...new Set(locateSecrets(config, secrets).map((path) => String(path[0])))];
      if (fields.length === 0) continue;
      // Exported names are unique in their family; a config without `id:` is found by its name.
      const id = config.id ?? records.find((record) => record.name === config.name)?.id;
      const record = id === undefined ? "a record" : `record ${id}`;
      places.push(`project ${result.project} ${family.family} ${record}, ${nounAndList(fields, "field")}`);
    }
  }
  return places;
}
