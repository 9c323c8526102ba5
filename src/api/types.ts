// Shapes of what the service sends and accepts, as the client exposes them after validation.

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
  team_id?: number | null;
  plugin_info?: unknown;
  delivery_rate_24h?: unknown;
  created_at?: string | null;
  updated_at?: string | null;
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

export interface LogEntry {
  id: string;
  team_id: number;
  plugin_id: number;
  plugin_config_id: number;
  timestamp: string;
  source: string;
  type: string;
  message: string;
  instance_id: string;
}

export interface Project {
  id: number;
  name: string;
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
