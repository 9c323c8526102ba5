// The setup the rollout e2e tests share: three projects, each with a GeoIP whose description the
// change sets; the three waves where the canary (project 2) is sound and the next wave (project 1)
// is the one a BROKEN description fails; and the GeoIP descriptions as the service shows them.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { spawnCli } from "./cli.js";
import { manifest } from "./manifest-text.js";
import type { OnFinished, TestServer } from "./test-server.js";
import { temporaryDirectory, type WorkDir } from "./work-dir.js";

export const ROLLOUT_PROJECTS = ["1", "2", "3"] as const;

/** The three projects' GeoIP with `description` (the same for each, or per project); `rollout` lines at the top. */
export function rolloutManifest(
  description: string | ((project: string) => string),
  rollout: readonly string[],
): string {
  return manifest(
    "version: 1",
    ...rollout,
    "projects:",
    ...ROLLOUT_PROJECTS.flatMap((project) => [
      `  "${project}":`,
      "    plugin_configs:",
      "      configs:",
      "        - name: GeoIP",
      "          plugin: 1",
      "          enabled: true",
      `          description: ${typeof description === "string" ? description : description(project)}`,
    ]),
  );
}

/**
 * `rollout:` in three waves (canary: project 2; second: project 1; rest: the others), baked `bake`
 * and judged on the logs over at least 2 entries: a BROKEN project 1 halts the second wave.
 */
export function threeWaveRollout(bake: string): string[] {
  return [
    "rollout:",
    "  waves:",
    "    - name: canary",
    '      projects: ["2"]',
    "    - name: second",
    '      projects: ["1"]',
    "    - name: rest",
    "      percent: 100",
    `  bake: ${bake}`,
    "  health:",
    "    logs:",
    "      min_entries: 2",
  ];
}

/** Each project's GeoIP description, in ROLLOUT_PROJECTS order (null when it has none or no GeoIP). */
export async function geoipDescriptions(server: TestServer): Promise<(string | null)[]> {
  const lists = await Promise.all(ROLLOUT_PROJECTS.map((project) => server.list(project, "plugin_configs")));
  return lists.map((records) => records.find((record) => record.name === "GeoIP")?.description ?? null);
}

/** A temporary directory for one test's manifests and journals, removed when the test ends. */
export async function rolloutWorkDir(onFinished: OnFinished): Promise<WorkDir> {
  const dir = await temporaryDirectory();
  onFinished(() => dir.remove());
  return dir;
}

/** The built CLI against the server (`env` added), with time for bakes on a loaded machine. */
export function runSlow(
  server: TestServer,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
) {
  return spawnCli(args, { cwd, env: { ...server.env, ...env }, timeoutMs: 80_000 }).done;
}

/** A webhook receiver on port 0: the events it was sent, in order. */
export async function webhookReceiver(onFinished: OnFinished) {
  const events: { event: string; message?: string; rollout?: { wave: string } }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      events.push(JSON.parse(body) as (typeof events)[number]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events };
}

/** Waits (polling, bounded) until `ready` holds; fails the test with `what` when it never does. */
export async function waitFor(ready: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !ready(); waited += 10) {
    if (waited > 60_000) throw new Error(`never saw ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The writes (not GET) the server was sent to these projects since the request log's entry `from`. */
export function writesTo(server: TestServer, projects: readonly string[], from = 0) {
  return server.emulator.requestLog
    .slice(from)
    .filter(
      (entry) =>
        entry.method !== "GET" &&
        projects.some((project) => entry.path.startsWith(`/api/projects/${project}/`)),
    );
}
