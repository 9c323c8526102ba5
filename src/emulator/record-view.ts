// How a stored record is written: as JSON on the wire, with the profile's quirks, and as the
// JavaScript module of its frontend endpoint.

import { isObject } from "../plain-object.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { PluginData, ProfileBehaviour, StoredRecord } from "./types.js";

export const EMPTY_CONFIG = "{}";
export const FRONTEND_CONTENT_TYPE = "application/javascript; charset=UTF-8";

/** As the service shows them (a profile may fall back to the plugin's own). */
export function shownText(record: StoredRecord, plugin: PluginData | undefined, profile: ProfileBehaviour) {
  // The real serializer's `representation["name"] or plugin.name`: "" falls back as null does.
  const fallback = profile.fallsBackToPluginText && plugin !== undefined;
  return {
    name: fallback ? record.name || plugin.name : record.name,
    description: fallback ? record.description || plugin.description : record.description,
  };
}

/** posthog-2024 shows each attachment under its key. */
function renderConfig(record: StoredRecord, profile: ProfileBehaviour): unknown {
  if (profile.configAs === "string") return record.config;
  let config: unknown;
  try {
    config = record.config === EMPTY_CONFIG ? {} : JSON.parse(record.config);
  } catch {
    // Text no form body could have stored (a seed data file's own string): shown as it is.
    return record.config;
  }
  const attachments = record.attachments ?? [];
  if (attachments.length === 0 || !isObject(config)) return config;
  const shown: Record<string, unknown> = { ...config };
  for (const { uid, key, size, name, type } of attachments)
    shown[key] = { uid, saved: true, size, name, type };
  return shown;
}

/** `collection`: an item of a list or rearrange response. */
export function renderRecord(
  record: StoredRecord,
  plugin: PluginData | undefined,
  profile: ProfileBehaviour,
  context: "single" | "collection",
): PluginConfigRecord {
  const showsPluginInfo = context === "single" || profile.pluginInfoInCollections;
  const pluginInfo = {
    id: record.plugin,
    name: plugin?.name ?? null,
    description: plugin?.description ?? null,
  };
  const { name, description } = shownText(record, plugin, profile);
  return {
    id: record.id,
    plugin: record.plugin,
    enabled: record.enabled,
    order: record.order,
    config: renderConfig(record, profile),
    error: record.error,
    team_id: record.project,
    plugin_info: showsPluginInfo ? JSON.stringify(pluginInfo) : null,
    delivery_rate_24h: record.delivery_rate_24h,
    created_at: record.created_at,
    updated_at: record.updated_at,
    name,
    description,
    deleted: record.deleted,
    match_action: record.match_action,
  };
}

/** A stand-in exporting getFrontendApp() with the config's identity. */
export function renderFrontendModule(record: StoredRecord, plugin: PluginData | undefined): string {
  // JSON.stringify escapes quotes; replacing "<" keeps the text inert if it is ever inlined in HTML.
  const app = JSON.stringify({
    pluginConfigId: record.id,
    pluginId: record.plugin,
    name: record.name ?? plugin?.name ?? null,
    enabled: record.enabled,
  }).replaceAll("<", "\\u003c");
  return `"use strict";
// Frontend app of plugin config ${record.id}, served by the pcsync emulator.
export function getFrontendApp(require) {
  const app = ${app};
  return {
    inject: ({ config, posthog }) => {
      void config;
      void posthog;
    },
    app,
  };
}
`;
}
