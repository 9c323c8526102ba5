// The Prometheus gate: a project's health is the one value a PromQL instant query gives for it
// (`{{project}}` filled in), asked of Prometheus's HTTP API through pcsync's one HTTP stack (its
// dispatcher, proxy, bounds and retries). A value over `max` fails the project; no value (no
// series, NaN, or a Prometheus that does not answer or refuses the query) is unknown, which fails it
// unless `allow_unknown`: a rollout never goes on because its signal could not be read.

import type { Dispatcher } from "undici";
import {
  connectForeignEndpoint,
  isLoopbackHost,
  type ProxyEnvironment,
  type RetryContext,
  sendAttempt,
  sendWithRetry,
} from "../api/index.js";
import { describeError } from "../errors.js";
import { InputError } from "../input-error.js";
import type { PrometheusHealthSpec } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import { asRecord } from "../plain-object.js";
import type { SecretRegistry } from "../redact.js";
import type { HealthGate, ProjectHealth, WaveToJudge } from "./health-gate.js";

/**
 * Each query's bounds: an attempt's whole time, the attempts (the first included) and the backoff
 * between them. A wave's verdict waits for these at most; Prometheus answers an instant query in
 * milliseconds when it is well.
 */
export const PROMETHEUS_DEFAULTS = {
  timeoutMs: 10_000,
  attempts: 3,
  backoffMs: 500,
  maxBackoffMs: 5_000,
  maxAnswerBytes: 4 * 1024 * 1024,
} as const;

export interface PrometheusGateOptions {
  concurrency: number;
  proxyEnvironment?: ProxyEnvironment | undefined;
  /** The `Authorization` header's value, from `prometheusAuthorization`; none: no header. */
  authorization?: string | undefined;
  now?: () => Date;
}

/**
 * The `Authorization` header `auth` asks for, its secret read from the variable it names in `env`
 * and registered in `secrets` (no output holds it). Refused, before anything is written: a variable
 * not set or empty, and credentials over plain http to a host other than this one without
 * `allowInsecureHttp` (`--insecure-http`), as the API key is.
 */
export function prometheusAuthorization(
  spec: PrometheusHealthSpec,
  env: NodeJS.ProcessEnv,
  secrets: SecretRegistry,
  allowInsecureHttp: boolean,
): string | undefined {
  const { auth } = spec;
  if (auth === undefined) return undefined;
  const url = new URL(spec.url);
  if (url.protocol === "http:" && !allowInsecureHttp && !isLoopbackHost(url.hostname))
    throw new InputError("prometheus_insecure_http", { host: url.host });
  const variable = auth.kind === "bearer" ? auth.tokenEnv : auth.passwordEnv;
  const secret = env[variable];
  if (secret === undefined || secret === "")
    throw new InputError("prometheus_credentials_missing", {
      variable,
      key: auth.kind === "bearer" ? "bearer_token_env" : "basic_auth.password_env",
    });
  secrets.register(secret);
  // A header cannot hold a line break or another control character (a value pasted with its newline).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
  if (/[\u0000-\u001f\u007f]/.test(secret))
    throw new InputError("prometheus_credentials_invalid", {
      variable,
      key: auth.kind === "bearer" ? "bearer_token_env" : "basic_auth.password_env",
    });
  if (auth.kind === "bearer") return `Bearer ${secret}`;
  const header = `Basic ${Buffer.from(`${auth.username}:${secret}`, "utf8").toString("base64")}`;
  secrets.register(header.slice("Basic ".length));
  return header;
}

/** Prometheus as messages name it: its base URL (it holds no credentials: the manifest refuses them). */
function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/$/, "")}`;
}

export function createPrometheusHealthGate(
  spec: PrometheusHealthSpec,
  options: PrometheusGateOptions,
): HealthGate {
  const base = new URL(spec.url);
  const shown = displayUrl(base);
  const now = options.now ?? (() => new Date());
  return {
    signal: "prometheus",
    async judge(wave: WaveToJudge, abort: AbortSignal): Promise<ProjectHealth[]> {
      const window = `${Math.max(1, Math.ceil((now().getTime() - wave.since.getTime()) / 1000))}s`;
      const { dispatcher, retry } = connectForeignEndpoint({
        origin: base.origin,
        connections: Math.max(1, options.concurrency),
        connectTimeoutMs: PROMETHEUS_DEFAULTS.timeoutMs,
        attempts: PROMETHEUS_DEFAULTS.attempts,
        backoffMs: PROMETHEUS_DEFAULTS.backoffMs,
        maxBackoffMs: PROMETHEUS_DEFAULTS.maxBackoffMs,
        proxyEnvironment: options.proxyEnvironment,
        signal: abort,
      });
      try {
        return await mapConcurrent(wave.projects, options.concurrency, async ({ project }) => {
          abort.throwIfAborted();
          const query = fillQuery(spec.query, project, window);
          const read = await queryValue(dispatcher, retry, base, shown, query, options.authorization, abort);
          return judgeValue(project, read, spec, shown);
        });
      } finally {
        await dispatcher.close().catch(() => undefined);
      }
    },
  };
}

/** The query with its placeholders filled; the project id as a PromQL string's inside. */
export function fillQuery(query: string, project: string, window: string): string {
  return query.replace(/\{\{\s*(project|window)\s*\}\}/g, (_, name: string) =>
    name === "window" ? window : project.replace(/[\\"]/g, (char) => `\\${char}`),
  );
}

/** What one query gave: a value, or why there is none. */
type QueryRead = { value: number } | { none: string };

async function queryValue(
  dispatcher: Dispatcher,
  retry: RetryContext,
  base: URL,
  shown: string,
  query: string,
  authorization: string | undefined,
  abort: AbortSignal,
): Promise<QueryRead> {
  const url = new URL(`${base.pathname.replace(/\/$/, "")}/api/v1/query`, base.origin);
  url.searchParams.set("query", query);
  const { timeoutMs, maxAnswerBytes } = PROMETHEUS_DEFAULTS;
  let last: Awaited<ReturnType<typeof sendWithRetry>>;
  try {
    last = await sendWithRetry(retry, {
      failedRequest: { method: "GET", path: `${shown}/api/v1/query` },
      traceLabel: "",
      safety: "idempotent",
      send: () =>
        sendAttempt(dispatcher, {
          method: "GET",
          url,
          headers: {
            accept: "application/json",
            ...(authorization === undefined ? {} : { authorization }),
          },
          headersTimeoutMs: timeoutMs,
          bodyTimeoutMs: timeoutMs,
          maxResponseBytes: maxAnswerBytes,
          signal: abort,
          deadlineMs: timeoutMs,
        }),
    });
  } catch (error) {
    abort.throwIfAborted();
    return { none: `Prometheus at ${shown} did not answer: ${describeError(error)}` };
  }
  if (last.failure !== undefined) {
    abort.throwIfAborted();
    const why =
      last.failure.kind === "timeout" ? `no answer within ${timeoutMs / 1000} s` : last.failure.message;
    return { none: `Prometheus at ${shown} did not answer: ${why}` };
  }
  return readAnswer(last.response.status, last.response.body, shown, authorization !== undefined);
}

/** The value of an answer of /api/v1/query: one series (or a scalar), or why there is none. */
export function readAnswer(status: number, body: Buffer, shown: string, sentCredentials = false): QueryRead {
  if (status === 401 || status === 403)
    return {
      none: sentCredentials
        ? `Prometheus at ${shown} refused pcsync's credentials (${status}): check the variable that health.prometheus's basic_auth or bearer_token_env names`
        : `Prometheus at ${shown} asks for credentials (${status}): give health.prometheus basic_auth or bearer_token_env`,
    };
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString("utf8"));
  } catch {
    return { none: `Prometheus at ${shown} answered ${status} with no JSON: is the URL Prometheus's?` };
  }
  const record = asRecord(answer);
  if (record?.status !== "success") {
    const error = typeof record?.error === "string" ? `: ${record.error.slice(0, 300)}` : "";
    return { none: `Prometheus at ${shown} refused the query (${status})${error}` };
  }
  const data = asRecord(record.data);
  if (data?.resultType === "scalar") return sampleValue(data.result);
  if (data?.resultType !== "vector" || !Array.isArray(data.result))
    return { none: `the query gives a ${String(data?.resultType)}, not an instant vector or a scalar` };
  if (data.result.length === 0) return { none: "the query gives no series for this project" };
  if (data.result.length > 1)
    return {
      none: `the query gives ${data.result.length} series for this project, not one: aggregate them (sum(...), max(...))`,
    };
  return sampleValue(asRecord(data.result[0])?.value);
}

function sampleValue(sample: unknown): QueryRead {
  const text = Array.isArray(sample) ? sample[1] : undefined;
  if (typeof text !== "string") return { none: "the answer holds no value" };
  const value =
    text === "+Inf" ? Number.POSITIVE_INFINITY : text === "-Inf" ? Number.NEGATIVE_INFINITY : Number(text);
  return Number.isNaN(value) ? { none: "the query's value is NaN" } : { value };
}

/** The verdict on a project's value: pure, so that the rule is tested apart from any server. */
export function judgeValue(
  project: string,
  read: QueryRead,
  spec: PrometheusHealthSpec,
  shown: string,
): ProjectHealth {
  if ("none" in read) {
    return {
      project,
      status: "unknown",
      passed: spec.allowUnknown,
      figures: {},
      summary: `${read.none}; health unknown; ${spec.allowUnknown ? "passes (allow_unknown)" : "fails (set allow_unknown: true to let it pass)"}`,
    };
  }
  const passed = read.value <= spec.max;
  return {
    project,
    status: passed ? "pass" : "fail",
    passed,
    // A journal is JSON: an infinite value is said in the summary only.
    figures: Number.isFinite(read.value) ? { value: read.value, max: spec.max } : { max: spec.max },
    summary: `the query at ${shown} gives ${read.value}: ${passed ? "within" : "over"} max ${spec.max}`,
  };
}
