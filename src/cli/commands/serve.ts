// `pcsync serve`: runs the service emulator until SIGINT/SIGTERM, for trying pcsync without a real
// service and for end-to-end tests. Its flags are parsed here; running it is src/run/serve-emulator.ts.

import { once } from "node:events";
import { resolve } from "node:path";
import {
  type ApiKeySpec,
  DEFAULT_LATE_WRITE_MS,
  DEFAULT_LOG_RATE,
  type EmulatorOptions,
  type FaultOptions,
  type LogErrorFault,
  MAX_LOG_RATE,
  PROFILE_NAMES,
  type ProfileName,
  parseLogErrorFault,
} from "../../emulator/index.js";
import { InputError } from "../../input-error.js";
import { DEFAULT_PORT, runServe, type ServeSettings } from "../../run/serve-emulator.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { untilStopSignal } from "../early-signals.js";
import { collect } from "../shared-options.js";

export interface RawServeOptions {
  port?: string;
  host?: string;
  data?: string;
  profile?: string;
  latency?: string;
  fail503?: string;
  fail429?: string;
  dropWrites?: string;
  lateWrites?: string;
  lateWriteDelay?: string;
  fail500AfterCommit?: string;
  proxyErrors?: string;
  retryAfter503?: string;
  rateLimit?: string;
  key?: string[];
  seed?: string;
  logRate?: string;
  faultLogErrors?: string[];
  quiet?: boolean;
}

const SCOPE_PATTERN = /^(\*|[a-z_]+:(read|write))$/;

function parseInteger(flag: string, raw: string, min: number, max: number, what: string): number {
  const value = /^[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InputError("usage", `${flag} must be ${what}, got "${raw}"`);
  }
  return value;
}

function parseDecimal(flag: string, raw: string, max: number, what: string): number {
  const value = /^\s*[0-9]*\.?[0-9]+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 0 && value <= max)) throw new InputError("usage", `${flag} must be ${what}, got "${raw}"`);
  return value;
}

function parseRate(flag: string, raw: string): number {
  return parseDecimal(flag, raw, 1, "a fraction from 0 to 1 (e.g. 0.1 for 10% of requests)");
}

function parseFaultLogErrors(spec: string): LogErrorFault {
  try {
    return parseLogErrorFault(spec);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new InputError("usage", `--fault-log-errors "${spec}": ${error.message}`);
  }
}

const PROJECTS_PATTERN = /^(\*|[0-9]+(,[0-9]+)*)$/;

function parseScopes(raw: string, spec: string): string[] | null {
  if (raw === "unscoped") return null;
  const scopes = raw.split(",").map((scope) => scope.trim());
  const bad = scopes.find((scope) => !SCOPE_PATTERN.test(scope));
  if (bad !== undefined) {
    throw new InputError(
      "usage",
      `--key "${spec}": "${bad}" is not a scope; use e.g. plugin:read,plugin:write, * or unscoped`,
    );
  }
  return scopes;
}

/** `KEY[:scopes[:projects]]`: scopes hold colons, so projects follow the last colon, if it is ids. */
export function parseKeySpec(spec: string): ApiKeySpec {
  const firstColon = spec.indexOf(":");
  const key = firstColon === -1 ? spec : spec.slice(0, firstColon);
  if (key === "" || /\s/.test(key)) {
    throw new InputError("usage", `--key "${spec}": the key must be a non-empty string without spaces`);
  }
  if (firstColon === -1) return { key, scopes: ["*"], projects: "*" };
  const rest = spec.slice(firstColon + 1);
  const lastColon = rest.lastIndexOf(":");
  const named = lastColon > 0 && PROJECTS_PATTERN.test(rest.slice(lastColon + 1));
  const scopesPart = named ? rest.slice(0, lastColon) : rest;
  const projectsPart = named ? rest.slice(lastColon + 1) : "*";
  const projects =
    projectsPart === "*" ? ("*" as const) : projectsPart.split(",").map((id) => Number.parseInt(id, 10));
  return { key, scopes: parseScopes(scopesPart, spec), projects };
}

const RATE_WINDOWS = { min: "perMinute", minute: "perMinute", h: "perHour", hour: "perHour" } as const;

/** `N` (per minute), or windows such as `480/minute,4800/hour`, the real service's limits. */
export function parseRateLimit(spec: string): { perMinute?: number; perHour?: number } {
  const limits: { perMinute?: number; perHour?: number } = {};
  for (const part of spec.split(",")) {
    const [count = "", unit = "minute", ...extra] = part.trim().split("/");
    const window = (RATE_WINDOWS as Record<string, "perMinute" | "perHour" | undefined>)[unit.trim()];
    if (window === undefined || extra.length > 0 || limits[window] !== undefined) {
      throw new InputError(
        "usage",
        `--rate-limit must be requests per minute, or windows like 480/minute,4800/hour; got "${spec}"`,
      );
    }
    const what = "a whole number of requests from 1 to 1000000";
    limits[window] = parseInteger("--rate-limit", count.trim(), 1, 1_000_000, what);
  }
  return limits;
}

function parseMs(flag: string, raw: string): number {
  return parseInteger(flag, raw, 0, 600_000, "a whole number of milliseconds up to 600000 (10 minutes)");
}

export function parseServeOptions(raw: RawServeOptions, cwd: string): ServeSettings {
  const faults: FaultOptions = {};
  if (raw.latency !== undefined) faults.latencyMs = parseMs("--latency", raw.latency);
  if (raw.fail503 !== undefined) faults.fail503Rate = parseRate("--fail-503", raw.fail503);
  if (raw.fail429 !== undefined) faults.fail429Rate = parseRate("--fail-429", raw.fail429);
  if (raw.dropWrites !== undefined) faults.dropWriteRate = parseRate("--drop-writes", raw.dropWrites);
  if (raw.lateWrites !== undefined) faults.lateWriteRate = parseRate("--late-writes", raw.lateWrites);
  if (raw.lateWriteDelay !== undefined)
    faults.lateWriteMs = parseMs("--late-write-delay", raw.lateWriteDelay);
  if (raw.fail500AfterCommit !== undefined)
    faults.commitThen500Rate = parseRate("--fail-500-after-commit", raw.fail500AfterCommit);
  if (raw.proxyErrors !== undefined) faults.proxyErrorRate = parseRate("--proxy-errors", raw.proxyErrors);
  if (raw.retryAfter503 !== undefined) {
    const what = "a whole number of seconds up to 86400 (a day)";
    faults.fail503RetryAfterSeconds = parseInteger("--retry-after-503", raw.retryAfter503, 0, 86_400, what);
  }
  if (raw.rateLimit !== undefined) faults.rateLimit = parseRateLimit(raw.rateLimit);
  if (raw.faultLogErrors !== undefined && raw.faultLogErrors.length > 0) {
    faults.logErrors = raw.faultLogErrors.map(parseFaultLogErrors);
  }
  if (raw.seed !== undefined) {
    faults.seed = parseInteger("--seed", raw.seed, 0, 2 ** 32 - 1, "a whole number from 0 to 4294967295");
  }

  const profile = raw.profile ?? "seed";
  if (!(PROFILE_NAMES as readonly string[]).includes(profile))
    throw new InputError("usage", `--profile must be one of ${PROFILE_NAMES.join(", ")}, got "${profile}"`);
  const host = raw.host ?? "127.0.0.1";
  if (host.trim() === "")
    throw new InputError("usage", "--host must not be empty (e.g. --host 0.0.0.0 to listen everywhere)");

  const emulator: EmulatorOptions = {
    port:
      raw.port === undefined
        ? DEFAULT_PORT
        : parseInteger("--port", raw.port, 0, 65_535, "a port number from 0 to 65535"),
    host,
    profile: profile as ProfileName,
    faults,
  };
  if (raw.data !== undefined) {
    if (raw.data.trim() === "")
      throw new InputError("usage", "--data must name a file (it is created if missing)");
    emulator.dataFile = resolve(cwd, raw.data);
  }
  if (raw.key !== undefined && raw.key.length > 0) emulator.keys = raw.key.map(parseKeySpec);
  if (raw.logRate !== undefined) {
    const what = `log entries per minute per plugin config, from 0 (none) to ${MAX_LOG_RATE}`;
    emulator.logRate = parseDecimal("--log-rate", raw.logRate, MAX_LOG_RATE, what);
  }
  return { emulator, quiet: raw.quiet === true };
}

export const registerServeCommand: CommandRegistrar = (io) =>
  newCommand(
    "serve",
    "Run the Plugin Configuration Service emulator (in memory, or persisted with --data).",
    `
Keys: KEY alone has every scope on every project. Scopes are comma-separated
(e.g. plugin:read,plugin:write or *), or "unscoped" for a legacy key; projects are
comma-separated ids or *. Without --key and without keys in the data file, a
development key is generated and printed.

Logs: every enabled plugin config (not frontend apps) logs --log-rate entries a
minute since its creation, mostly INFO with some LOG and WARN; the last 24 hours
are shown, with the stored entries (jobs). --fault-log-errors SELECTOR makes the
configs it matches, as they are now, log a share of ERROR entries after their
last create or update (entries before it stay normal). SELECTOR is one of
name:GLOB (* matches anything), plugin:ID or description:TEXT (a case-sensitive
substring), optionally ending in @RATIO, the ERROR share from 0 to 1 (default
0.5). Entries are the same on every run: no --seed needed.

Examples:
  $ pcsync serve --port 8000 --data state.json --profile posthog-2024 \\
      --key ci-key:plugin:read,plugin:write:1,2 --fail-503 0.05 --seed 7
  $ pcsync serve --log-rate 600 --fault-log-errors 'description:BROKEN@0.8'
`,
  )
    .option("--port <n>", `port to listen on, 0 for any free port (default ${DEFAULT_PORT})`)
    .option("--host <host>", "address to listen on (default 127.0.0.1)")
    .option("--data <file>", "persist state in this JSON file: created if missing, reloaded on start")
    .option("--profile <name>", `behaviour to emulate: ${PROFILE_NAMES.join(" or ")} (default seed)`)
    .option("--latency <ms>", "add this many milliseconds to every response")
    .option("--fail-503 <rate>", "answer this fraction (0..1) of requests with 503")
    .option("--fail-429 <rate>", "answer this fraction (0..1) of requests with 429")
    .option(
      "--drop-writes <rate>",
      "commit this fraction (0..1) of writes, then drop the connection unanswered",
    )
    .option(
      "--late-writes <rate>",
      "hold this fraction (0..1) of writes before they commit, so that they land after the client gave up",
    )
    .option(
      "--late-write-delay <ms>",
      `how long --late-writes holds a write (default ${DEFAULT_LATE_WRITE_MS}: longer than pcsync's 30 s timeout)`,
    )
    .option(
      "--fail-500-after-commit <rate>",
      "commit this fraction (0..1) of creates, then answer 500 with the service's error body",
    )
    .option(
      "--proxy-errors <rate>",
      "answer this fraction (0..1) of requests 502 or 504 with an HTML page, as a proxy in front would",
    )
    .option("--retry-after-503 <seconds>", "the injected 503s carry Retry-After: this many seconds")
    .option(
      "--rate-limit <n>",
      "throttle each key to n requests per minute (429); or windows, e.g. 480/minute,4800/hour",
    )
    .option("--key <spec>", "accept an API key KEY[:scopes[:projects]] (repeatable; see below)", collect)
    .option("--seed <n>", "seed the random faults, for reproducible runs")
    .option(
      "--log-rate <per-minute>",
      `log entries each enabled plugin config writes per minute, 0 for none (default ${DEFAULT_LOG_RATE})`,
    )
    .option(
      "--fault-log-errors <selector>",
      "configs matching SELECTOR log ERRORs after their last change (repeatable; see below)",
      collect,
    )
    .option("--quiet", "do not log requests to stderr")
    .action(async (raw: RawServeOptions) => {
      const settings = parseServeOptions(raw, io.cwd);
      await untilStopSignal((stop) => runServe(settings, io, once(stop, "abort")));
    });
