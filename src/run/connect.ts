// Connecting to the service: the server (--base-url, else PCSYNC_BASE_URL, else the manifest's
// server.base_url), the API key (src/run/credentials.ts), and the one API client of a run.

import { ApiClient, type ApiClientOptions } from "../api/index.js";
import { InputError } from "../input-error.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { DesiredState } from "../manifest/types.js";
import { resolveApiKey } from "./credentials.js";
import type { RunIo } from "./run-io.js";

export type ClientSettings = Omit<
  ApiClientOptions,
  "baseUrl" | "baseUrlSource" | "apiKey" | "secrets" | "signal" | "onAttempt" | "proxyEnvironment"
>;

export interface ConnectSettings {
  /** --base-url: wins over the environment and the manifest. */
  baseUrl?: string | undefined;
  /** --api-key-file: wins over PCSYNC_API_KEY. */
  apiKeyFile?: string | undefined;
  /** Called once the server and the key are known: their problems are said first. */
  client: () => ClientSettings;
}

export interface ConnectOptions {
  fallback?: BaseUrlFallbackValue;
  /** Once aborted, the client starts no new request (apply interrupted). */
  signal?: AbortSignal;
  /** Watch's metrics. */
  onAttempt?: ApiClientOptions["onAttempt"];
}

/** Where a command finds the base URL after --base-url and PCSYNC_BASE_URL. */
export interface BaseUrlFallbackValue {
  baseUrl: string | undefined;
  /** What to do when there is none, for the message. */
  orElse: string;
  /** `server.base_url at pcsync.yaml:3`. */
  source?: string | undefined;
}

export function manifestServer(desired: DesiredState | undefined): BaseUrlFallbackValue {
  const source = desired?.baseUrlSource;
  return {
    baseUrl: desired?.baseUrl,
    orElse: "set server.base_url in the manifest",
    source: source === undefined ? undefined : `server.base_url at ${formatSource(source)}`,
  };
}

export function baseUrlGiven(settings: Pick<ConnectSettings, "baseUrl">, io: RunIo): boolean {
  return settings.baseUrl !== undefined || envBaseUrl(io) !== undefined;
}

/** An empty variable is an unset one: CI systems often define variables as empty strings. */
function envBaseUrl(io: RunIo): string | undefined {
  return io.env.PCSYNC_BASE_URL === "" ? undefined : io.env.PCSYNC_BASE_URL;
}

/** Never a saved plan's server: the key goes only where the user said. */
export function resolveBaseUrl(
  settings: Pick<ConnectSettings, "baseUrl">,
  io: RunIo,
  fallback?: BaseUrlFallbackValue,
): { baseUrl: string; source: string | undefined } {
  const fromEnv = envBaseUrl(io);
  const [baseUrl, source] =
    settings.baseUrl !== undefined
      ? // Typed on the command line just now: naming it again would only lengthen the message.
        [settings.baseUrl, undefined]
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

export async function connect(
  settings: ConnectSettings,
  io: RunIo,
  options: ConnectOptions = {},
): Promise<ApiClient> {
  const { baseUrl, source } = resolveBaseUrl(settings, io, options.fallback);
  const apiKey = await resolveApiKey({ env: io.env, cwd: io.cwd, keyFile: settings.apiKeyFile }, io.secrets);
  const client = new ApiClient({
    ...settings.client(),
    baseUrl,
    baseUrlSource: source,
    apiKey,
    secrets: io.secrets,
    signal: options.signal,
    onAttempt: options.onAttempt,
    proxyEnvironment: io.env,
  });
  if (client.base.correction !== undefined) io.stderr.write(`warning: ${client.base.correction}\n`);
  return client;
}
