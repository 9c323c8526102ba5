// Types of the emulator: its options, its running handle, and EmulatorData — the in-memory state
// that is also, as JSON, the format of the data file.

import type { FamilyName, WritableField } from "../families.js";
import type { LogEntry, PluginConfigRecord } from "../wire-types.js";

export type ProfileName = "seed" | "posthog-2024";

export const PROFILE_NAMES = ["seed", "posthog-2024"] as const satisfies readonly ProfileName[];

export interface ApiKeySpec {
  key: string;
  /** `null` is an unscoped legacy key: full access. */
  scopes: string[] | null;
  projects: number[] | "*";
  label?: string;
}

export interface PluginData {
  id: number;
  name: string;
  description: string;
  /** What the plugin can do server-side; frontend apps have neither. */
  capabilities: { methods: string[]; scheduled_tasks: string[] };
  /** A site/frontend app: what `pipeline_frontend_apps_configs` shows in the posthog-2024 profile. */
  frontendApp: boolean;
}

export interface ProjectData {
  id: number;
  name: string;
}

/**
 * A plugin config as stored: the record's own fields as the wire shows them, the computed ones as
 * the emulator keeps them, plus the family it was created through. `name` and `description` are
 * stored as sent; the posthog-2024 fallback to the plugin's own applies only on output.
 */
export interface StoredRecord extends Pick<PluginConfigRecord, "id" | WritableField> {
  family: FamilyName;
  /** The project id (the record's `team_id`). */
  project: number;
  /** JSON text: the seed profile writes it as this string, posthog-2024 as the object it holds. */
  config: string;
  /** Files attached to config fields through a form (posthog-2024), shown inside `config`. */
  attachments?: StoredAttachment[];
  error: string | null;
  delivery_rate_24h: string | null;
  created_at: string;
  updated_at: string;
}

/** An attachment as the real service shows it in `config[key]` (its contents are not kept). */
export interface StoredAttachment {
  uid: number;
  key: string;
  name: string;
  size: number;
  type: string;
}

export interface EmulatorData {
  version: 1;
  plugins: PluginData[];
  projects: ProjectData[];
  keys: ApiKeySpec[];
  records: StoredRecord[];
  /** Stored as the logs endpoint sends them: log entries have no fields of their own. */
  logEntries: LogEntry[];
  nextIds: { record: number };
}

/**
 * Which plugin configs log errors after a change (see log-faults.ts): by name glob (`*` only), plugin
 * id, or a text in the description, each on the record as it is now; `ratio` (default 0.5) is the
 * share of ERROR entries among those stamped after the record's last create or update.
 */
export type LogErrorFault = ({ name: string } | { plugin: number } | { description: string }) & {
  ratio?: number;
};

export interface FaultOptions {
  /** Added to every response. */
  latencyMs?: number;
  /** 0..1 fraction of requests answered 503 before any processing. */
  fail503Rate?: number;
  /** 0..1 fraction of requests answered 429 before any processing. */
  fail429Rate?: number;
  /** The wait in seconds that injected 429s announce; default 1. 0 lets fast tests retry at once. */
  fail429WaitSeconds?: number;
  /** 0..1 fraction of writes whose change is committed, then the connection is destroyed unanswered. */
  dropWriteRate?: number;
  /** Seconds the injected 503s ask to wait in Retry-After (how a service sheds load); default none. */
  fail503RetryAfterSeconds?: number;
  /** 0..1 fraction of creates committed, then answered 500, as a Django service without transactions can. */
  commitThen500Rate?: number;
  /** 0..1 fraction of requests answered 502 or 504 (half each) with a proxy's HTML page, unserved. */
  proxyErrorRate?: number;
  /** Per-key sliding-window throttling. */
  rateLimit?: { perMinute?: number; perHour?: number };
  /** Pages hold at most this many records whatever `limit` asks, as a service that caps it does. */
  maxPageSize?: number;
  /** Seeds the PRNG deciding faults. */
  seed?: number;
  /** Configs whose synthesized log stream turns to errors after their last change. */
  logErrors?: LogErrorFault[];
}

export interface EmulatorOptions {
  port?: number;
  host?: string;
  profile?: ProfileName;
  dataFile?: string;
  data?: EmulatorData;
  keys?: ApiKeySpec[];
  faults?: FaultOptions;
  /** Synthesized log entries per minute of each enabled config (log-stream.ts), 0 to 60000; default 60. */
  logRate?: number;
  log?: (line: string) => void;
}

export interface RequestLogEntry {
  method: string;
  /** The request target as sent: path and query string. */
  path: string;
  /** 0 when the connection was dropped without a response. */
  status: number;
  hadAuth: boolean;
}

export interface RunningEmulator {
  url: string;
  port: number;
  profile: ProfileName;
  devKey: string | undefined;
  setFaults(faults: FaultOptions): void;
  snapshot(): EmulatorData;
  requestLog: ReadonlyArray<RequestLogEntry>;
  resetRequestLog(): void;
  /**
   * Resolves once every request being served now has been answered and logged: a killed client's
   * last request is still served (after any latency) and would otherwise land in the next count.
   */
  idle(): Promise<void>;
  close(): Promise<void>;
}
