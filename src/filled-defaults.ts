// The service's habit of filling an empty value with a default: posthog-2024 shows the plugin's own
// name and description where a record holds null or "". Every rule about that habit starts here.

import type { WritableField } from "./families.js";
import type { PluginConfigRecord } from "./wire-types.js";

/** The fields a server may fill with a default where the record holds null or "". */
export const FILLED_WHEN_EMPTY: readonly WritableField[] = ["name", "description"];

/** Whether `value`, written to `field`, may be shown as a default the server fills in. */
export function mayShowFilled(field: WritableField, value: unknown): boolean {
  return (value === null || value === "") && FILLED_WHEN_EMPTY.includes(field);
}

/** The plugin's own name and description, when the record's `plugin_info` carries them. */
export function pluginDefaults(record: PluginConfigRecord): { name?: string; description?: string } {
  let info: unknown = record.plugin_info;
  if (typeof info === "string") {
    try {
      info = JSON.parse(info);
    } catch {
      return {};
    }
  }
  if (typeof info !== "object" || info === null) return {};
  const { name, description } = info as { name?: unknown; description?: unknown };
  return {
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof description === "string" ? { description } : {}),
  };
}

/**
 * Whether the record's `field` may hold `written`, an empty value the server fills: it shows the
 * plugin's own text, or it does not say what that text is (a list on posthog-2024 carries no
 * plugin_info), so whatever it shows may be it.
 */
export function mayHoldFilled(field: WritableField, written: unknown, record: PluginConfigRecord): boolean {
  if (!mayShowFilled(field, written)) return false;
  const texts = pluginDefaults(record);
  if (texts.name === undefined && texts.description === undefined) return true;
  return record[field] === texts[field as "name" | "description"];
}
