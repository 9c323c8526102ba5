// The service's JSON shapes, the one definition both the API client and the emulator import
// (neither side imports the other).

import type { WritableField } from "./families.js";

/** As returned by both families. */
export interface PluginConfigRecord {
  id: number;
  plugin: number;
  enabled: boolean;
  order: number;
  name: string | null;
  description: string | null;
  deleted: boolean;
  match_action: number | null;
  config?: unknown;
  error?: unknown;
  team_id?: unknown;
  plugin_info?: unknown;
  delivery_rate_24h?: unknown;
  created_at?: unknown;
  updated_at?: unknown;
}

export type PluginConfigInput = Partial<Pick<PluginConfigRecord, WritableField>>;

/** Sent as `{"job": {"type": ..., "payload": ...}}`. */
export interface JobInput {
  type: string;
  payload?: Readonly<Record<string, unknown>>;
}

/** The body of rearrange: config id (seed) or plugin id (posthog-2024) -> new order. */
export type RearrangeOrders = Readonly<Record<string, number>>;

export interface LogEntry {
  id: string;
  team_id: number;
  plugin_id: number;
  plugin_config_id: number;
  timestamp: string;
  source: string;
  type: string;
  message: string;
  instance_id: string | null;
}

export interface Project {
  /** Numeric on the real service; kept as the service sent it. Use `String(id)` in paths. */
  id: number | string;
  name: string | null;
  [key: string]: unknown;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface ServiceErrorBody {
  type: string;
  code: string;
  detail: string;
  attr: string | null;
}
