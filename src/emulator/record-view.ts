// How a stored record is written on the wire: the interface's field order, the computed fields,
// and the posthog-2024 quirks: name/description fall back to the plugin's own, collections carry no
// plugin_info, and config is an object.

import type { PluginConfigRecord } from "../wire-types.js";
import type { ProfileBehaviour } from "./profiles.js";
import { renderConfig } from "./record-config.js";
import type { PluginData, StoredRecord } from "./types.js";

/** A record alone (retrieve, create, update, job) or as an item of a list or rearrange response. */
export type RecordContext = "single" | "collection";

export function renderRecord(
  record: StoredRecord,
  plugin: PluginData | undefined,
  profile: ProfileBehaviour,
  context: RecordContext,
): PluginConfigRecord {
  const fallback = profile.fallsBackToPluginText && plugin !== undefined;
  const showsPluginInfo = context === "single" || profile.pluginInfoInCollections;
  return {
    id: record.id,
    plugin: record.plugin,
    enabled: record.enabled,
    order: record.order,
    config: renderConfig(record, profile),
    error: record.error,
    team_id: record.project,
    plugin_info: showsPluginInfo
      ? JSON.stringify({
          id: record.plugin,
          name: plugin?.name ?? null,
          description: plugin?.description ?? null,
        })
      : null,
    delivery_rate_24h: record.delivery_rate_24h,
    created_at: record.created_at,
    updated_at: record.updated_at,
    // The real serializer's `representation["name"] or plugin.name`: "" falls back as null does.
    name: fallback ? record.name || plugin.name : record.name,
    description: fallback ? record.description || plugin.description : record.description,
    deleted: record.deleted,
    match_action: record.match_action,
  };
}
