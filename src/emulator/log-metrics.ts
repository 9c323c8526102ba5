// The emulator's /metrics (Prometheus text format): how many log entries each plugin config has
// logged since it was created, by type, so that a Prometheus scraping the emulator sees what a
// service's own metrics would show, and a rollout's Prometheus gate can be tried against it.

import type { LogStream } from "./log-stream.js";
import type { EmulatorStore } from "./store.js";

const TYPES = ["ERROR", "WARN", "INFO", "LOG"] as const;

export function renderLogMetrics(store: EmulatorStore, logStream: LogStream): string {
  // Every record, deleted ones included, and every stored log entry.
  const { records, logEntries } = store.data;
  const stored = new Map<string, number>();
  for (const entry of logEntries) {
    const key = `${entry.plugin_config_id}/${entry.type.toUpperCase()}`;
    stored.set(key, (stored.get(key) ?? 0) + 1);
  }
  const lines = [
    "# HELP pcsync_emulator_log_entries_total Log entries each plugin config has logged since it was created, by type.",
    "# TYPE pcsync_emulator_log_entries_total counter",
  ];
  for (const record of records) {
    if (record.deleted) continue;
    for (const type of TYPES) {
      const filter = { types: new Set([type]), search: "", after: undefined, before: undefined };
      const synthesized = logStream.of(record, store.plugin(record.plugin), filter, { sinceCreation: true });
      const count = (synthesized?.count ?? 0) + (stored.get(`${record.id}/${type}`) ?? 0);
      // A config that logs nothing (disabled, a frontend app) has no series, as an exporter would.
      if (synthesized === undefined && count === 0) continue;
      lines.push(
        `pcsync_emulator_log_entries_total{project="${record.project}",config="${record.id}",type="${type}"} ${count}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
