// The emulator's default data set. The demo and the docs refer to these exact ids, so change them
// only together with those.

import type { FamilyName } from "../families.js";
import type { LogEntry } from "../wire-types.js";
import type { EmulatorData, PluginData, StoredRecord } from "./types.js";

// Timestamps hang off a fixed date, not the clock, so the example data is the same on every run.
const REFERENCE_TIME = Date.parse("2024-06-01T12:00:00.000Z");

function hoursBefore(hours: number): string {
  return new Date(REFERENCE_TIME - hours * 3_600_000).toISOString();
}

/** A plugin; without `methods`, a frontend app (which has neither methods nor scheduled tasks). */
function plugin(id: number, name: string, description: string, methods?: string[]): PluginData {
  const capabilities =
    methods === undefined
      ? { methods: [], scheduled_tasks: [] }
      : { methods, scheduled_tasks: ["runEveryMinute"] };
  return { id, name, description, capabilities, frontendApp: methods === undefined };
}

type RecordRow = [number, FamilyName, number, number, boolean, number, string, string | null];

function exampleRecord(row: RecordRow): StoredRecord {
  const [id, family, project, plugin, enabled, order, name, deliveryRate] = row;
  return {
    ...{ id, family, project, plugin, enabled, order, name, description: null, deleted: false },
    ...{ match_action: null, config: "{}", error: null, delivery_rate_24h: deliveryRate },
    created_at: hoursBefore(24 * 30 - id),
    updated_at: hoursBefore(24 * 7 - id),
  };
}

function geoipLog(index: number, hoursAgo: number, type: string, source: string, message: string): LogEntry {
  const suffix = index.toString(16).padStart(12, "0");
  return {
    id: `018fd5a0-0000-7000-8000-${suffix}`,
    team_id: 1,
    plugin_id: 1,
    plugin_config_id: 1,
    timestamp: hoursBefore(hoursAgo),
    source,
    type,
    message,
    instance_id: "018fd5a0-1111-7000-8000-000000000001",
  };
}

export function exampleData(): EmulatorData {
  return {
    version: 1,
    plugins: [
      plugin(1, "GeoIP", "Enrich events with the location of their IP address.", ["processEvent"]),
      plugin(2, "Property Filter", "Remove chosen properties from every event.", ["processEvent"]),
      plugin(3, "Taxonomy Standardizer", "Rename events to one naming convention.", ["processEvent"]),
      plugin(4, "Customer.io Export", "Send events and identities to Customer.io.", ["onEvent"]),
      plugin(5, "S3 Export", "Export events to an Amazon S3 bucket in batches.", ["onEvent"]),
      plugin(6, "BigQuery Export", "Export events to a Google BigQuery table.", ["onEvent"]),
      plugin(7, "First Time Event Tracker", "Flag the first time a person sends an event.", ["processEvent"]),
      plugin(8, "Unduplicator", "Drop events that were already ingested.", ["processEvent"]),
      plugin(9, "Banner Events", "Record which site banners a visitor saw.", ["processEvent"]),
      plugin(40, "Notification Bar", "Show a notification bar at the top of the site."),
      plugin(41, "Pineapple Mode", "Make it rain pineapples on the site."),
      plugin(42, "Bug Report Widget", "Let visitors report bugs from a floating button."),
      plugin(43, "Early Access Features", "Let visitors opt in to early access features."),
    ],
    projects: [
      { id: 1, name: "Web" },
      { id: 2, name: "Mobile" },
      { id: 3, name: "Staging" },
    ],
    keys: [],
    // id, family, project, plugin, enabled, order, name, delivery_rate_24h
    records: (
      [
        [1, "plugin_configs", 1, 1, true, 1, "GeoIP", "0.9987"],
        [2, "plugin_configs", 1, 2, false, 2, "Property Filter", null],
        [3, "plugin_configs", 1, 5, true, 3, "Legacy S3", "0.9521"],
        [4, "pipeline_frontend_apps_configs", 1, 40, true, 1, "Notification Bar", null],
        [5, "plugin_configs", 2, 1, true, 1, "GeoIP", "1.0"],
      ] satisfies RecordRow[]
    ).map(exampleRecord),
    logEntries: [
      geoipLog(1, 23.5, "INFO", "SYSTEM", "Plugin loaded (instance 018fd5a0)."),
      geoipLog(2, 20, "DEBUG", "CONSOLE", "Looking up 203.0.113.7"),
      geoipLog(3, 14.25, "LOG", "CONSOLE", "Resolved 203.0.113.7 to Amsterdam, NL"),
      geoipLog(4, 9, "WARN", "PLUGIN", "GeoIP database is 31 days old; results may be stale."),
      geoipLog(5, 4.5, "ERROR", "PLUGIN", "Lookup failed for 198.51.100.300: invalid IP address"),
      geoipLog(6, 1, "INFO", "SYSTEM", "Plugin reloaded after config change."),
    ],
    nextIds: { record: 6 },
  };
}
