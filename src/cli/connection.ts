// Connection flags shared by every command that talks to the service, and the one place that
// turns them (plus the environment and the manifest's server.base_url) into an API client.

import { type Command, Option } from "commander";
import {
  ApiClient,
  type ApiClientOptions,
  CLIENT_DEFAULTS,
  LIST_BOUND_DEFAULTS,
  type ListBounds,
  minimumSettleTimeoutMs,
  settleWindowMs,
} from "../api/index.js";
import { InputError } from "../input-error.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { DesiredState } from "../manifest/types.js";
import type { CliIo } from "./cli-io.js";
import { resolveApiKey } from "./credentials.js";

export interface ConnectionFlags {
  baseUrl?: string;
  apiKeyFile?: string;
  insecureHttp?: boolean;
  concurrency?: string;
  maxRps?: string;
  timeout?: string;
  maxListRecords?: string;
  listTimeout?: string;
  /** Only on the commands that create records (addSettleTimeoutOption). */
  settleTimeout?: string;
  /** Only on the commands that create records (addSettleTimeoutOption). */
  treat5xxAsInFlight?: boolean;
  verbose?: boolean;
}

/** Where a command finds the base URL when neither --base-url nor PCSYNC_BASE_URL gives one. */
export type BaseUrlFallback = "manifest" | "plan-or-manifest" | "none";

const BASE_URL_DEFAULTS: Readonly<Record<BaseUrlFallback, string>> = {
  manifest: "$PCSYNC_BASE_URL, then the manifest's server.base_url",
  "plan-or-manifest":
    "$PCSYNC_BASE_URL, then the manifest's server.base_url; with --plan, none: name the plan's server, it must match",
  none: "$PCSYNC_BASE_URL",
};

export function addConnectionOptions(command: Command, fallback: BaseUrlFallback): Command {
  return command
    .addOption(new Option("--base-url <url>", `service base URL (default: ${BASE_URL_DEFAULTS[fallback]})`))
    .addOption(
      new Option("--api-key-file <path>", "read the API key from this file (default: $PCSYNC_API_KEY)"),
    )
    .addOption(new Option("--insecure-http", "allow plain http:// to a non-loopback host"))
    .addOption(
      new Option("--concurrency <n>", "requests in flight at most").default(
        String(CLIENT_DEFAULTS.concurrency),
      ),
    )
    .addOption(new Option("--max-rps <n>", "requests per second at most (default: no client-side limit)"))
    .addOption(
      new Option("--timeout <seconds>", "per-request timeout").default(
        String(CLIENT_DEFAULTS.requestTimeoutMs / 1000),
      ),
    )
    .addOption(
      new Option(
        "--max-list-records <n>",
        "refuse a list (a family, the project list) whose count is larger than this",
      ).default(String(LIST_BOUND_DEFAULTS.maxRecords)),
    )
    .addOption(
      new Option(
        "--list-timeout <seconds>",
        "longest time to read one list, all its pages and re-reads",
      ).default(String(LIST_BOUND_DEFAULTS.maxReadMs / 1000)),
    )
    .addOption(
      new Option(
        "-v, --verbose",
        "trace every request, and the proxy used, on stderr (the API key is never shown)",
      ),
    );
}

/**
 * `--settle-timeout` and `--treat-5xx-as-in-flight`, on the commands that create records (apply,
 * rollback, watch): how a failed create is settled, see src/api/create-config.ts.
 */
export function addSettleTimeoutOption(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--settle-timeout <seconds>",
        `longest time to settle one failed create (re-reading the family, and sending it again once shown not made); at least a proof window of 2.5 × --timeout for each of its ${CLIENT_DEFAULTS.createPosts} POSTs (default: that least, ${minimumSettleTimeoutMs(CLIENT_DEFAULTS.requestTimeoutMs, CLIENT_DEFAULTS.createPosts) / 1000} s at the default --timeout)`,
      ),
    )
    .addOption(
      new Option(
        "--treat-5xx-as-in-flight",
        "take every 5xx answer to a create as one that may still commit (the proof window), for a proxy that imitates the service's error body",
      ),
    );
}

/**
 * `--settle-timeout` in ms, checked against the proof windows it must hold: a window cut short can
 * never show that a create was not made, so a shorter budget is refused rather than cut silently.
 */
function settleTimeoutOf(flags: ConnectionFlags, timeoutMs: number): number | undefined {
  if (flags.settleTimeout === undefined) return undefined;
  const settleMs = Math.ceil(parsePositiveNumber(flags.settleTimeout, "--settle-timeout") * 1000);
  const posts = CLIENT_DEFAULTS.createPosts;
  const leastMs = minimumSettleTimeoutMs(timeoutMs, posts);
  if (settleMs < leastMs) {
    const window = settleWindowMs(timeoutMs);
    throw new InputError(
      "usage",
      `--settle-timeout ${flags.settleTimeout} is shorter than the ${leastMs / 1000} s that settling one create may need: a proof window of ${window / 1000} s (2.5 × --timeout, at least 1 s) for each of its ${posts} POSTs, and a window cut short can never show that a create was not made. Pass --settle-timeout ${Math.ceil(leastMs / 1000)} or more, or leave it out (it then defaults to that), or lower --timeout`,
    );
  }
  return settleMs;
}

export function parsePositiveInt(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InputError("usage", `${flag} must be a whole number ≥ 1, not "${value}"`);
  return Number(value);
}

export function parsePositiveNumber(value: string, flag: string): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number <= 0) {
    throw new InputError("usage", `${flag} must be a number > 0, not "${value}"`);
  }
  return number;
}

/** Where a command finds the base URL after --base-url and PCSYNC_BASE_URL, and where it is from. */
export interface BaseUrlFallbackValue {
  baseUrl: string | undefined;
  /** What to do when there is none, for the message. */
  orElse: string;
  /** Where the value is from (`server.base_url at pcsync.yaml:3`), for messages about it. */
  source?: string | undefined;
}

/** The fallback of plan, apply and watch: the manifest's `server.base_url`, with its place. */
export function manifestServer(desired: DesiredState | undefined): BaseUrlFallbackValue {
  const source = desired?.baseUrlSource;
  return {
    baseUrl: desired?.baseUrl,
    orElse: "set server.base_url in the manifest",
    source: source === undefined ? undefined : `server.base_url at ${formatSource(source)}`,
  };
}

/**
 * The base URL: --base-url, else PCSYNC_BASE_URL, else `fallback` (the manifest's server.base_url)
 * for the commands that have one. Never a saved plan's server: the key goes only where the user said.
 * With where it came from, for messages about it.
 */
export function resolveBaseUrl(
  flags: ConnectionFlags,
  io: CliIo,
  fallback?: BaseUrlFallbackValue,
): { baseUrl: string; source: string | undefined } {
  // An empty variable is an unset one (CI systems often define variables as empty strings).
  const fromEnv = io.env.PCSYNC_BASE_URL === "" ? undefined : io.env.PCSYNC_BASE_URL;
  const [baseUrl, source] =
    flags.baseUrl !== undefined
      ? // Typed on the command line just now: naming it again would only lengthen the message.
        [flags.baseUrl, undefined]
      : fromEnv !== undefined
        ? [fromEnv, "PCSYNC_BASE_URL"]
        : [fallback?.baseUrl, fallback?.source];
  if (baseUrl === undefined || baseUrl === "") {
    throw new InputError(
      "usage",
      fallback === undefined
        ? "no server given: pass --base-url URL or set PCSYNC_BASE_URL"
        : `no server given: pass --base-url URL, set PCSYNC_BASE_URL, or ${fallback.orElse}`,
    );
  }
  return { baseUrl, source };
}

export function concurrencyOf(flags: ConnectionFlags): number {
  return flags.concurrency === undefined
    ? CLIENT_DEFAULTS.concurrency
    : parsePositiveInt(flags.concurrency, "--concurrency");
}

/** `--max-list-records` and `--list-timeout`, checked; defaults where not given. */
function listBoundsOf(flags: ConnectionFlags): ListBounds {
  return {
    maxRecords:
      flags.maxListRecords === undefined
        ? LIST_BOUND_DEFAULTS.maxRecords
        : parsePositiveInt(flags.maxListRecords, "--max-list-records"),
    maxReadMs:
      flags.listTimeout === undefined
        ? LIST_BOUND_DEFAULTS.maxReadMs
        : Math.ceil(parsePositiveNumber(flags.listTimeout, "--list-timeout") * 1000),
  };
}

/**
 * PCSYNC_TIME_SCALE, a testing seam: every duration of the client (timeouts, proof windows, the
 * settle time, backoffs, the longest pause honoured, the list time bound) multiplied by one factor,
 * so tests that shrink time keep the proportions users get. Unset: 1.
 */
function timeScaleOf(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.PCSYNC_TIME_SCALE;
  if (raw === undefined || raw === "") return undefined;
  const scale = Number(raw);
  if (!(Number.isFinite(scale) && scale > 0 && scale <= 1))
    throw new InputError("usage", `PCSYNC_TIME_SCALE must be a number > 0 and ≤ 1, not "${raw}"`);
  return scale;
}

export async function createClientFromFlags(
  flags: ConnectionFlags,
  io: CliIo,
  options: {
    /** The base URL of the manifest (or saved plan), and where to set it, for plan and apply. */
    fallback?: BaseUrlFallbackValue;
    /** Once aborted, the client starts no new request (apply interrupted). */
    signal?: AbortSignal;
    /** Told of every request attempt's method and status (watch's metrics). */
    onAttempt?: ApiClientOptions["onAttempt"];
  } = {},
): Promise<ApiClient> {
  const { fallback, signal, onAttempt } = options;
  const { baseUrl, source } = resolveBaseUrl(flags, io, fallback);
  const apiKey = await resolveApiKey(
    {
      env: io.env,
      cwd: io.cwd,
      ...(flags.apiKeyFile === undefined ? {} : { keyFile: flags.apiKeyFile }),
    },
    io.secrets,
  );
  const timeoutMs =
    flags.timeout === undefined
      ? CLIENT_DEFAULTS.requestTimeoutMs
      : parsePositiveNumber(flags.timeout, "--timeout") * 1000;
  const client = new ApiClient({
    baseUrl,
    baseUrlSource: source,
    apiKey,
    secrets: io.secrets,
    allowInsecureHttp: flags.insecureHttp === true,
    concurrency: concurrencyOf(flags),
    ...(flags.maxRps === undefined ? {} : { maxRps: parsePositiveNumber(flags.maxRps, "--max-rps") }),
    requestTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    listBounds: listBoundsOf(flags),
    settleTimeoutMs: settleTimeoutOf(flags, timeoutMs),
    timeScale: timeScaleOf(io.env),
    treat5xxAsInFlight: flags.treat5xxAsInFlight === true,
    ...(flags.verbose ? { trace: (line: string) => io.stderr.write(`${line}\n`) } : {}),
    ...(signal === undefined ? {} : { signal }),
    ...(onAttempt === undefined ? {} : { onAttempt }),
    // HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment the command was given.
    proxyEnvironment: io.env,
  });
  if (client.base.correction !== undefined) io.stderr.write(`warning: ${client.base.correction}\n`);
  return client;
}
