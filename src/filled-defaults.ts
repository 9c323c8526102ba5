// The service's habit of filling an empty value with a default: posthog-2024 shows the plugin's own
// name and description where a record holds null or "". Every rule about that habit starts here.

import type { WritableField } from "./families.js";
import { parseJson } from "./files/read-json-file.js";
import { trimAsService } from "./trim-as-service.js";
import type { PluginConfigRecord } from "./wire-types.js";

export const FILLED_WHEN_EMPTY: readonly WritableField[] = ["name", "description"];

/** Null, or text that is empty once trimmed. */
export function mayShowFilled(field: WritableField, value: unknown): boolean {
  const empty = value === null || (typeof value === "string" && trimAsService(value) === "");
  return empty && FILLED_WHEN_EMPTY.includes(field);
}

/** A server that shows an empty name or description does not fill them in (seed). */
export function showsEmptyText(records: Iterable<{ name?: unknown; description?: unknown }>): boolean {
  for (const record of records)
    if (
      mayShowFilled("name", record.name ?? null) ||
      mayShowFilled("description", record.description ?? null)
    )
      return true;
  return false;
}

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
