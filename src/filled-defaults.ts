// The service's habit of filling an empty value with a default: posthog-2024 shows the plugin's own
// name and description where a record holds null or "". Every rule about that habit starts here.

import type { WritableField } from "./families.js";
import { parseJson } from "./files/read-json-file.js";
import { trimAsService } from "./trim-as-service.js";
import type { PluginConfigRecord } from "./wire-types.js";

/** The fields a server may fill with a default where the record holds null or "". */
export const FILLED_WHEN_EMPTY: readonly WritableField[] = ["name", "description"];

/**
 * Whether `value`, written to `field`, may be shown as a default the server fills in: null, or
 * text that is empty once the service has trimmed it (trim-as-service.ts).
 */
export function mayShowFilled(field: WritableField, value: unknown): boolean {
  const empty = value === null || (typeof value === "string" && trimAsService(value) === "");
  return empty && FILLED_WHEN_EMPTY.includes(field);
}

/**
 * Whether any of `records`, as a server showed them, has an empty name or description: a server
 * that shows one does not fill them in (seed), and a text of the plugin's own it shows is the
 * record's own text, not a default.
 */
export function showsEmptyText(records: Iterable<{ name?: unknown; description?: unknown }>): boolean {
  for (const record of records)
    if (
      mayShowFilled("name", record.name ?? null) ||
      mayShowFilled("description", record.description ?? null)
    )
      return true;
  return false;
}

/** The plugin's own name and description, when the record's `plugin_info` carries them. */
export function pluginDefaults(record: Pick<PluginConfigRecord, "plugin_info">): {
  name?: string;
  description?: string;
} {
  const info =
    typeof record.plugin_info === "string" ? parseJson(record.plugin_info).value : record.plugin_info;
  if (typeof info !== "object" || info === null) return {};
  const { name, description } = info as { name?: unknown; description?: unknown };
  return {
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof description === "string" ? { description } : {}),
  };
}
