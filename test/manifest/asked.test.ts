// What a manifest asks, without where it says it: the same for a manifest with comments, blocks in
// another order or files split and named otherwise; different for any change to what it asks (a
// field, prune, the owner, the rollout's rules, the server).

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifestFingerprint } from "../../src/manifest/asked.js";
import { loadManifests } from "../../src/manifest/index.js";

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "pcsync-asked-"));
});
afterAll(() => rm(directory, { recursive: true, force: true }));

const ROLLOUT = [
  "rollout:",
  "  waves:",
  "    - name: canary",
  '      projects: ["2"]',
  "    - name: rest",
  "      percent: 100",
  "  bake: 10s",
];
const PROJECT_1 = [
  '  "1":',
  "    plugin_configs:",
  "      configs:",
  "        - { name: GeoIP, plugin: 1, description: v1 }",
];
const PROJECT_2 = [
  '  "2":',
  "    plugin_configs:",
  "      prune: true",
  "      configs:",
  "        - { name: GeoIP, plugin: 1 }",
];

/** Loads files (name -> lines) from a directory of their own and returns the fingerprint. */
async function fingerprintOf(
  files: Record<string, string[]>,
  server = "https://pcs.example",
): Promise<string> {
  const dir = await mkdtemp(join(directory, "m-"));
  const paths: string[] = [];
  for (const [name, lines] of Object.entries(files)) {
    await writeFile(join(dir, name), `${lines.join("\n")}\n`);
    paths.push(name);
  }
  const loaded = await loadManifests(paths, { env: {}, cwd: dir });
  if (loaded.value === undefined) throw new Error(JSON.stringify(loaded.errors));
  return manifestFingerprint(server, loaded.value);
}

describe("manifestFingerprint", () => {
  const base = { "pcsync.yaml": ["version: 1", ...ROLLOUT, "projects:", ...PROJECT_1, ...PROJECT_2] };

  it("is the same however the manifest is written: comments, order of blocks, files split and named otherwise", async () => {
    const reference = await fingerprintOf(base);
    const same = [
      {
        "pcsync.yaml": [
          "# reviewed",
          "version: 1",
          "",
          ...ROLLOUT,
          "# the fleet",
          "projects:",
          ...PROJECT_1,
          ...PROJECT_2,
        ],
      },
      { "other-name.yaml": ["version: 1", "projects:", ...PROJECT_2, ...PROJECT_1, ...ROLLOUT] },
      {
        "a.yaml": ["version: 1", ...ROLLOUT, "projects:", ...PROJECT_2],
        "b.yaml": ["version: 1", "projects:", ...PROJECT_1],
      },
    ];
    for (const files of same) expect(await fingerprintOf(files)).toBe(reference);
  });

  it("changes with anything the manifest asks, and with the server", async () => {
    const reference = await fingerprintOf(base);
    const edit = (from: string, to: string) => ({
      "pcsync.yaml": base["pcsync.yaml"].map((line) => line.replace(from, to)),
    });
    const different = [
      edit("description: v1", "description: v2"),
      edit("prune: true", "prune: false"),
      edit("bake: 10s", "bake: 20s"),
      edit("percent: 100", 'projects: ["1"]'),
      { "pcsync.yaml": ["version: 1", "owner: team-a", ...ROLLOUT, "projects:", ...PROJECT_1, ...PROJECT_2] },
      { "pcsync.yaml": ["version: 1", "projects:", ...PROJECT_1, ...PROJECT_2] },
    ];
    for (const files of different) expect(await fingerprintOf(files)).not.toBe(reference);
    expect(await fingerprintOf(base, "https://other.example")).not.toBe(reference);
  });
});
