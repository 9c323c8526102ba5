// Connection flags of every command that talks to the service, checked and handed to the use case
// that connects (src/run/connect.ts).

import type { Command } from "commander";
import { MAX_TIMER_MS } from "../abortable-sleep.js";
import { type ApiClient, CLIENT_DEFAULTS, LIST_BOUND_DEFAULTS } from "../api/index.js";
import {
  CREATE_POSTS,
  type CreateRule,
  minimumSettleTimeoutMs,
  settleWindowMs,
} from "../apply/proof-window.js";
import { InputError } from "../input-error.js";
import { type ConnectOptions, connect } from "../run/connect.js";
import type { CliIo } from "./cli-io.js";
import { parseFlag } from "./shared-options.js";

export interface ConnectionFlags {
  baseUrl?: string;
  apiKeyFile?: string;
  insecureHttp?: boolean;
  /** Options with a default are always given. */
  concurrency: string;
  maxRps?: string;
  timeout: string;
  maxListRecords: string;
  listTimeout: string;
  /** These two only on the commands that create records (addSettleTimeoutOption). */
  settleTimeout?: string;
  treat5xxAsInFlight?: boolean;
  verbose?: boolean;
}

export type BaseUrlFallback = "manifest" | "plan-or-manifest" | "none";

const BASE_URL_DEFAULTS: Readonly<Record<BaseUrlFallback, string>> = {
  manifest: "$PCSYNC_BASE_URL, then the manifest's server.base_url",
  "plan-or-manifest":
    "$PCSYNC_BASE_URL, then the manifest's server.base_url; with --plan, none: name the plan's server, it must match",
  none: "$PCSYNC_BASE_URL",
};

export function addConnectionOptions(command: Command, fallback: BaseUrlFallback): Command {
  return command
    .option("--base-url <url>", `service base URL (default: ${BASE_URL_DEFAULTS[fallback]})`)
    .option("--api-key-file <path>", "read the API key from this file (default: $PCSYNC_API_KEY)")
    .option("--insecure-http", "allow plain http:// to a non-loopback host")
    .option("--concurrency <n>", "requests in flight at most", String(CLIENT_DEFAULTS.concurrency))
    .option("--max-rps <n>", "requests per second at most (default: no client-side limit)")
    .option("--timeout <seconds>", "per-request timeout", String(CLIENT_DEFAULTS.requestTimeoutMs / 1000))
    .option(
      "--max-list-records <n>",
      "refuse a list (a family, the project list) whose count is larger than this",
      String(LIST_BOUND_DEFAULTS.maxRecords),
    )
    .option(
      "--list-timeout <seconds>",
      "longest time to read one list, all its pages and re-reads",
      String(LIST_BOUND_DEFAULTS.maxReadMs / 1000),
    )
    .option(
      "-v, --verbose",
      "trace every request, and the proxy used, on stderr (the API key is never shown)",
    );
}

/** How a failed create is settled: see src/apply/create-config.ts. */
export function addSettleTimeoutOption(command: Command): Command {
  return command
    .option(
      "--settle-timeout <seconds>",
      `longest time to settle one failed create (re-reading the family, and sending it again once shown not made); at least a proof window of 2.5 × --timeout for each of its ${CREATE_POSTS} POSTs (default: that least, ${minimumSettleTimeoutMs(CLIENT_DEFAULTS.requestTimeoutMs, CREATE_POSTS) / 1000} s at the default --timeout)`,
    )
    .option(
      "--treat-5xx-as-in-flight",
      "take every 5xx answer to a write as one that may still commit, for a proxy that imitates the service's error body: a create waits out the proof window, an update or delete is noted as one that may land late",
    );
}

/** A proof window cut short can never show that a create was not made: refused, not cut silently. */
function settleTimeoutOf(flags: ConnectionFlags, timeoutMs: number): number | undefined {
  if (flags.settleTimeout === undefined) return undefined;
  const settleMs = parseSecondsFlag(flags.settleTimeout, "--settle-timeout");
  const leastMs = minimumSettleTimeoutMs(timeoutMs, CREATE_POSTS);
  if (settleMs < leastMs) {
    const window = settleWindowMs(timeoutMs);
    throw new InputError(
      "usage",
      `--settle-timeout ${flags.settleTimeout} is shorter than the ${leastMs / 1000} s that settling one create may need: a proof window of ${window / 1000} s (2.5 × --timeout, at least 1 s) for each of its ${CREATE_POSTS} POSTs, and a window cut short can never show that a create was not made. Pass --settle-timeout ${Math.ceil(leastMs / 1000)} or more, or leave it out (it then defaults to that), or lower --timeout`,
    );
  }
  return settleMs;
}

export function createRuleOf(flags: ConnectionFlags): CreateRule {
  return {
    settleTimeoutMs: settleTimeoutOf(flags, parseSecondsFlag(flags.timeout, "--timeout")),
    treat5xxAsInFlight: flags.treat5xxAsInFlight === true,
  };
}

export function parsePositiveInt(value: string, flag: string): number {
  return parseFlag(flag, value, "a whole number ≥ 1", (text) =>
    /^\d+$/.test(text) && Number(text) >= 1 ? Number(text) : undefined,
  );
}

/** In whole ms, at most what one timer holds, so that no value ends at once or is an internal error. */
export function parseSecondsFlag(value: string, flag: string): number {
  const ms = Math.ceil(parsePositiveNumber(value, flag) * 1000);
  if (ms > MAX_TIMER_MS)
    throw new InputError(
      "usage",
      `${flag} must be at most ${Math.floor(MAX_TIMER_MS / 1000)} seconds (about 24 days), not "${value}"`,
    );
  return ms;
}

export function parsePositiveNumber(value: string, flag: string): number {
  const number = Number(value);
  return parseFlag(flag, value, "a number > 0", () =>
    value.trim() !== "" && Number.isFinite(number) && number > 0 ? number : undefined,
  );
}

export function concurrencyOf(flags: ConnectionFlags): number {
  return parsePositiveInt(flags.concurrency, "--concurrency");
}

/** A testing seam: every duration of the client scaled, so that shrunk tests keep users' proportions. */
function timeScaleOf(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.PCSYNC_TIME_SCALE;
  if (raw === undefined || raw === "") return undefined;
  const scale = Number(raw);
  return parseFlag("PCSYNC_TIME_SCALE", raw, "a number > 0 and ≤ 1", () =>
    Number.isFinite(scale) && scale > 0 && scale <= 1 ? scale : undefined,
  );
}

/** The flags are checked once the server and the key are known: a missing one is said first. */
export async function createClientFromFlags(
  flags: ConnectionFlags,
  io: CliIo,
  options: ConnectOptions = {},
): Promise<ApiClient> {
  return connect(
    {
      baseUrl: flags.baseUrl,
      apiKeyFile: flags.apiKeyFile,
      client: () => {
        const timeoutMs = parseSecondsFlag(flags.timeout, "--timeout");
        // Checked with the other flags, before anything is read; apply takes it from createRuleOf.
        settleTimeoutOf(flags, timeoutMs);
        return {
          allowInsecureHttp: flags.insecureHttp === true,
          concurrency: concurrencyOf(flags),
          ...(flags.maxRps === undefined ? {} : { maxRps: parsePositiveNumber(flags.maxRps, "--max-rps") }),
          requestTimeoutMs: timeoutMs,
          bodyTimeoutMs: timeoutMs,
          listBounds: {
            maxRecords: parsePositiveInt(flags.maxListRecords, "--max-list-records"),
            maxReadMs: parseSecondsFlag(flags.listTimeout, "--list-timeout"),
          },
          treat5xxAsInFlight: flags.treat5xxAsInFlight === true,
          timeScale: timeScaleOf(io.env),
          ...(flags.verbose ? { trace: (line: string) => io.stderr.write(`${line}\n`) } : {}),
        };
      },
    },
    io,
    options,
  );
}
