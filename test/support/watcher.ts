// `pcsync watch` as a child process for the end-to-end tests: started on port 0, its endpoints'
// address read from what it prints, its cycle lines awaited one by one.

import { utimes, writeFile } from "node:fs/promises";
import { type CliRun, spawnCli } from "./cli.js";
import { waitFor } from "./wait-for.js";

export interface Watcher {
  /** `http://127.0.0.1:PORT` of /metrics, /healthz and /readyz. */
  url: string;
  /** Resolves once `count` cycle lines have been printed; returns them. */
  cycles(count: number): Promise<string[]>;
  signal(name: NodeJS.Signals): void;
  soFar(): { stdout: string; stderr: string };
  done: Promise<CliRun>;
  get(path: string): Promise<{ status: number; text: string }>;
}

const CYCLE_LINE = /^\S+ cycle \d+ .*$/gm;

export async function startWatcher(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): Promise<Watcher> {
  const { child, done, soFar } = spawnCli(["watch", "--listen", "127.0.0.1:0", ...args], {
    env: options.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    timeoutMs: 60_000,
  });
  let exited = false;
  void done.then(() => {
    exited = true;
  });
  await waitFor(() => exited || /serving .* on http:\/\/\S+/.test(soFar().stderr), "the watcher to listen");
  const match = /serving .* on (http:\/\/\S+)/.exec(soFar().stderr);
  if (!match?.[1]) throw new Error(`the watcher did not start:\n${soFar().stderr}`);
  const url = match[1];
  const lines = () => soFar().stdout.match(CYCLE_LINE) ?? [];
  return {
    url,
    async cycles(count) {
      await waitFor(() => exited || lines().length >= count, `cycle ${count}`, 30_000);
      if (lines().length < count) throw new Error(`the watcher exited:\n${soFar().stderr}`);
      return lines();
    },
    signal: (name) => child.kill(name),
    soFar,
    done,
    async get(path) {
      const response = await fetch(`${url}${path}`);
      return { status: response.status, text: await response.text() };
    },
  };
}

/**
 * Writes a manifest whole, as git-sync or a ConfigMap update does (a new file renamed into place
 * would do too), dated a minute back. A running watcher uses a change once its content has
 * settled (--manifest-settle), whatever the file's time.
 */
export async function writeSettled(path: string, text: string): Promise<void> {
  await writeFile(path, text);
  const past = new Date(Date.now() - 60_000);
  await utimes(path, past, past);
}

/** A metric's value in the text format, for the series with exactly these labels (undefined: none). */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(",");
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? "").split(",").filter(Boolean).sort().join(",");
    if (have === wanted) return Number(match[3]);
  }
  return undefined;
}
