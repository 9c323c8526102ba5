// The JSON shapes of the service, the one definition both sides of the wire import: the API client
// validates responses into them, the emulator writes them. Neither side imports the other.

/** A plugin config record, as returned by both families. */
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

/** The writable fields of a record; the body of create and update. */
export interface PluginConfigInput {
  plugin?: number;
  enabled?: boolean;
  order?: number;
  name?: string | null;
  description?: string | null;
  deleted?: boolean;
  match_action?: number | null;
}

/** The body of a job request: `{"job": {"type": ..., "payload": ...}}`. */
export interface JobInput {
  type: string;
  payload?: Readonly<Record<string, unknown>>;
}

/** The body of rearrange: config id (seed) or plugin id (posthog-2024) -> new order. */
export type RearrangeOrders = Readonly<Record<string, number>>;

/** An entry of the logs endpoint. */
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

/** The paginated list envelope. */
export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The service's error body. */
export interface ServiceErrorBody {
  type: string;
  code: string;
  detail: string;
  attr: string | null;
}
