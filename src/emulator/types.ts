// Types of the emulator: its profiles, options, running handle, and EmulatorData (the in-memory
// state, and as JSON the data file; its shapes are data-file.ts's readers).

import type { readData, readKey, readPlugin, readProject, readRecord } from "./data-file.js";

export const PROFILE_NAMES = ["seed", "posthog-2024"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

// The two behaviours the emulator can take, as data: handlers consult these flags instead of
// branching on the profile name, so every difference between the profiles is listed here.
export const PROFILES = {
  seed: {
    /** "overlapping": plugin_configs shows every config, pipeline_frontend_apps_configs those of
     * frontend apps; "disjoint": the family a record was created through. */
    families: "disjoint",
    /** "soft-delete" sets deleted and disables; "disable" only sets enabled false. */
    deleteMode: "soft-delete",
    deleteUnknownStatus: 404,
    rearrangeKeyedBy: "config",
    /** Scoped keys (anything but unscoped or exactly ["*"]) refused on rearrange, job, frontend. */
    refusesScopedKeysOnActions: false,
    pluginWritableOnUpdate: true,
    /** Name and description stored trimmed, as DRF's CharField does. */
    trimsText: false,
    /** A null or "" name/description replaced by the plugin's own on output. */
    fallsBackToPluginText: false,
    /** Without it list and rearrange responses send null there. */
    pluginInfoInCollections: true,
    jobResponse: "record",
    /** Form-encoded and multipart bodies too, on create and update. */
    acceptsFormBodies: false,
    /** The seed interface's string, or the object the real serializer returns (`{}` when empty). */
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

/** Each flag's type is the union of its values, so both profiles must set every flag. */
export type ProfileBehaviour = (typeof PROFILES)[ProfileName];

export type ApiKeySpec = ReturnType<typeof readKey>;
export type PluginData = ReturnType<typeof readPlugin>;
export type ProjectData = ReturnType<typeof readProject>;
export type StoredRecord = ReturnType<typeof readRecord>;
export type EmulatorData = ReturnType<typeof readData>;

/**
 * Plugin configs that log errors after a change (see faults.ts), by name glob (`*` only), plugin id,
 * or description text; `ratio` (default 0.5): the ERROR share after the record's last write.
 */
export type LogErrorFault = ({ name: string } | { plugin: number } | { description: string }) & {
  ratio?: number;
};

// Rates are 0..1 fractions of requests (or writes).
export interface FaultOptions {
  latencyMs?: number;
  /** Answered before any processing. */
  fail503Rate?: number;
  fail429Rate?: number;
  /** Default 1; 0 lets fast tests retry at once. */
  fail429WaitSeconds?: number;
  /** Committed, then the connection is destroyed unanswered. */
  dropWriteRate?: number;
  /** Retry-After of the injected 503s (how a service sheds load); default none. */
  fail503RetryAfterSeconds?: number;
  /** Held `lateWriteMs`, then committed: a request that waited in a load balancer's queue. */
  lateWriteRate?: number;
  /** Default 45,000 ms (the CLI gives up on a request after 30 s). */
  lateWriteMs?: number;
  /** Creates committed, then answered 500, as a Django service without transactions can. */
  commitThen500Rate?: number;
  /** A proxy's HTML page, 502 or 504 (half each), unserved. */
  proxyErrorRate?: number;
  rateLimit?: { perMinute?: number; perHour?: number };
  /** Pages hold at most this many records whatever `limit` asks, as a service that caps it does. */
  maxPageSize?: number;
  seed?: number;
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
  /** Synthesized log entries per minute of each enabled config, 0 to 60000; default 60. */
  logRate?: number;
  log?: (line: string) => void;
  /** The service's clock: a test skews it to play a service whose clock is off. */
  now?: () => number;
}

export interface RequestLogEntry {
  method: string;
  /** Path and query string as sent. */
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
  /** A killed client's last request is still served and would otherwise land in the next count. */
  idle(): Promise<void>;
  close(): Promise<void>;
}
