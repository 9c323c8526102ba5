// An in-process emulator on port 0 with one API key, and the CLI aimed at it as a user would set
// it up (PCSYNC_BASE_URL and PCSYNC_API_KEY), for the end-to-end tests. The CLI runs in-process;
// what only the binary shows (its exit status, its real streams, signals) uses runBuilt.

import {
  type ApiKeySpec,
  type EmulatorData,
  type FaultOptions,
  type ProfileName,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import { type CliRun, runBuiltCli } from "./cli.js";
import { HttpClient, type Reply } from "./http-client.js";
import { type InProcessRun, runCliInProcess } from "./in-process.js";
import { REPOSITORY } from "./paths.js";

/** A recognisable key: no output of any command may contain it. */
export const API_KEY = "phx_e2e_secret_key_4f1d2c3b5a69788";

export interface RemoteRecord {
  id: number;
  name: string | null;
  plugin: number;
  enabled: boolean;
  order: number;
  description: string | null;
  deleted: boolean;
}

export interface RunOptions {
  /** Added to the server's environment; a member set to undefined is removed. */
  env?: NodeJS.ProcessEnv;
  /** The working directory (default: the repository). */
  cwd?: string;
}

export interface TestServer {
  emulator: RunningEmulator;
  /** The environment a user would set: base URL and key. */
  env: NodeJS.ProcessEnv;
  /** Runs the CLI in-process against this server. */
  run(args: readonly string[], options?: RunOptions): Promise<InProcessRun>;
  /** Runs the built CLI as a child process against this server. */
  runBuilt(args: readonly string[], options?: RunOptions): Promise<CliRun>;
  /** Calls the API directly with the server's key, as another user or tool would. */
  call(method: string, path: string, body?: unknown): Promise<Reply>;
  /** The family's list (all pages), as a client sees it. */
  list(project: number | string, family: FamilyName): Promise<RemoteRecord[]>;
  close(): Promise<void>;
}

export async function startServer(
  profile: ProfileName,
  options: {
    data?: EmulatorData;
    faults?: FaultOptions;
    key?: Omit<ApiKeySpec, "key">;
    /** Log entries each enabled plugin config writes a minute (the emulator's default: 60). */
    logRate?: number;
    /** How far the service's clock is ahead of this machine's (behind, when negative). */
    clockAheadMs?: number;
  } = {},
): Promise<TestServer> {
  const emulator = await startEmulator({
    profile,
    keys: [{ key: API_KEY, ...(options.key ?? { scopes: null, projects: "*" }) }],
    ...(options.data === undefined ? {} : { data: options.data }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.logRate === undefined ? {} : { logRate: options.logRate }),
    ...(options.clockAheadMs === undefined ? {} : { now: () => Date.now() + (options.clockAheadMs ?? 0) }),
  });
  const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: API_KEY };
  const http = new HttpClient(emulator.url, API_KEY);
  return {
    emulator,
    env,
    run: (args, runOptions = {}) =>
      runCliInProcess(args, { cwd: runOptions.cwd ?? REPOSITORY, env: { ...env, ...runOptions.env } }),
    runBuilt: (args, runOptions = {}) =>
      runBuiltCli(args, { cwd: runOptions.cwd ?? REPOSITORY, env: { ...env, ...runOptions.env } }),
    call: (method, path, body) => http.request(method, path, body === undefined ? {} : { body }),
    async list(project, family) {
      // Faults may be on: reads are retried here as the CLI would.
      for (let attempt = 0; ; attempt++) {
        const { status, body } = await http.get(`/api/projects/${project}/${family}/?limit=1000`);
        if (status === 200) return (body as { results: RemoteRecord[] }).results;
        if (attempt >= 20) throw new Error(`listing ${family} of project ${project}: ${status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => emulator.close(),
  };
}

/** How a test registers cleanup: the test context's `onTestFinished` (safe in concurrent tests). */
export type OnFinished = (handler: () => Promise<void>) => void;

/** A server of its own for one test, closed when the test ends. */
export async function openServer(
  onFinished: OnFinished,
  ...args: Parameters<typeof startServer>
): Promise<TestServer> {
  const server = await startServer(...args);
  onFinished(() => server.close());
  return server;
}
