// Types of the emulator: its profiles, its options, its running handle, and EmulatorData — the
// in-memory state that is also, as JSON, the format of the data file (its shapes are data-file.ts's
// readers).

import type { readData, readKey, readPlugin, readProject, readRecord } from "./data-file.js";

export const PROFILE_NAMES = ["seed", "posthog-2024"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

// The two behaviours the emulator can take, as data: handlers consult these flags instead of
// branching on the profile name, so every difference between the profiles is listed here.
export const PROFILES = {
  seed: {
    /** "disjoint": a record belongs to the family it was created through; "overlapping": plugin_configs
     * shows every config, pipeline_frontend_apps_configs those of frontend apps. */
    families: "disjoint",
    /** "soft-delete" sets deleted and disables; "disable" only sets enabled false. */
    deleteMode: "soft-delete",
    /** Status of DELETE on an unknown id. */
    deleteUnknownStatus: 404,
    /** What the keys of a rearrange body name. */
    rearrangeKeyedBy: "config",
    /** Whether scoped keys (anything but unscoped or exactly ["*"]) are refused on rearrange, job, frontend. */
    refusesScopedKeysOnActions: false,
    pluginWritableOnUpdate: true,
    /** Whether name and description are stored trimmed (trim-as-service.ts), as DRF's CharField does. */
    trimsText: false,
    /** Whether a null or "" name/description is replaced by the plugin's own on output. */
    fallsBackToPluginText: false,
    /** Whether list and rearrange responses carry plugin_info; without it they send null there. */
    pluginInfoInCollections: true,
    jobResponse: "record",
    /** Whether create and update also take form-encoded and multipart bodies, not only JSON. */
    acceptsFormBodies: false,
    /** How `config` is written in responses: the seed interface's string, or the JSON object the real
     * service's serializer returns (`{}` when empty). */
    configAs: "string",
    retryAfterHeader: true,
  },
  "posthog-2024": {
    families: "overlapping",
    deleteMode: "disable",
    deleteUnknownStatus: 500,
    rearrangeKeyedBy: "plugin",
    refusesScopedKeysOnActions: true,
    pluginWritableOnUpdate: false,
    trimsText: true,
    fallsBackToPluginText: true,
    pluginInfoInCollections: false,
    jobResponse: "empty",
    acceptsFormBodies: true,
    configAs: "object",
    retryAfterHeader: false,
  },
} as const satisfies Record<ProfileName, Record<string, unknown>>;

/** Either profile: each flag's type is the union of its values, so both must set every flag. */
export type ProfileBehaviour = (typeof PROFILES)[ProfileName];

export type ApiKeySpec = ReturnType<typeof readKey>;
export type PluginData = ReturnType<typeof readPlugin>;
export type ProjectData = ReturnType<typeof readProject>;
export type StoredRecord = ReturnType<typeof readRecord>;
export type EmulatorData = ReturnType<typeof readData>;

/**
 * Which plugin configs log errors after a change (see faults.ts): by name glob (`*` only), plugin
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
  /**
   * 0..1 fraction of writes held `lateWriteMs` after they arrive, then committed and answered: a
   * request that waited in a load balancer's queue, which lands after its client stopped waiting.
   */
  lateWriteRate?: number;
  /** How long a late write is held; default 45,000 ms (the CLI gives up on a request after 30 s). */
  lateWriteMs?: number;
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
  /**
   * The service's clock, in ms since the epoch (default `Date.now`): what it stamps writes
   * (`updated_at`) and log entries with. A test sets it ahead of or behind this machine's clock to
   * play a service whose clock is skewed.
   */
  now?: () => number;
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
